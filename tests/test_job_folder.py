"""Sweep job folder names: Hydra's `{num}_{overrides}` with a corpus path kept flat and a long command cut
under the file-name limit, the same way on every rerun (tx_keras/run_folder/job_folder.py)."""

from pathlib import Path

from omegaconf import OmegaConf

from tx_keras.run_folder.job_folder import MAX_BYTES, RESOLVER, job_folder, register_job_folder


def test_a_short_name_is_hydra_s_own_and_a_path_does_not_nest_folders():
    assert job_folder(3, "model.num_heads=8") == "3_model.num_heads=8"
    assert job_folder(0, "") == "0"
    assert job_folder(1, "data.path=/data/eng-fra.tsv,seed=0") == "1_data.path=_data_eng-fra.tsv,seed=0"


def test_a_long_command_is_cut_under_the_limit_the_same_way_each_time():
    overrides = ",".join(f"model.knob_{i}=0.{i}1234567890123" for i in range(20))
    name = job_folder(12, overrides)
    assert len(name.encode()) <= MAX_BYTES and name.startswith("12_model.knob_0=")
    assert job_folder(12, overrides) == name  # a rerun finds the folder again
    assert job_folder(12, overrides + ",seed=1") != name  # the cut ends with a hash of the whole
    accented = "data.path=" + "é" * 150
    cut = job_folder(0, accented)
    assert len(cut.encode()) <= MAX_BYTES and "\ufffd" not in cut  # no character split in two


def test_the_hydra_config_names_jobs_through_the_resolver():
    register_job_folder()
    register_job_folder()  # twice is harmless (the config tree and tx-train both call it)
    subdir = f"${{{RESOLVER}:${{num}},${{names}}}}"
    node = OmegaConf.create({"num": 4, "names": "data.path=/x.tsv,grid=[0.6,1.0]", "subdir": subdir})
    assert node.subdir == "4_data.path=_x.tsv,grid=[0.6,1.0]"  # commas and brackets pass as one argument
    hydra_default = OmegaConf.load(Path(__file__).parents[1] / "conf" / "hydra" / "default.yaml")
    assert RESOLVER in hydra_default.sweep._get_node("subdir")._value()
