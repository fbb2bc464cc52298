"""How the raw attention summaries of a run folder are tagged and labelled: the format shared by their
writer (training's AttentionMaps) and their reader (the explorer's TensorBoard plugin)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from tensorboard.compat.proto import summary_pb2

PLUGIN_NAME = "tx_attention"  # the key in SummaryMetadata.plugin_data and in the plugin's URLs
FORMAT_VERSION = 1
KINDS = ("encoder_self", "decoder_self", "cross")


@dataclass(frozen=True)
class ProbeAttention:
    """What one tag holds besides its (layers, heads, queries, keys) float16 tensor: the token labels.

    Queries are the rows (the attending side), keys the columns. Decoder queries are the decoder's
    teacher-forced input: SOS, then the reference.
    """

    probe: int
    kind: str
    queries: list[str]
    keys: list[str]
    source: str
    reference: str

    @property
    def tag(self) -> str:
        return tag_for(self.probe, self.kind)

    def to_metadata(self) -> summary_pb2.SummaryMetadata:
        content = json.dumps({"version": FORMAT_VERSION, **asdict(self)}, ensure_ascii=False).encode()
        return summary_pb2.SummaryMetadata(
            display_name=f"probe {self.probe + 1}, {self.kind}",
            summary_description="Attention weights (layers, heads, queries, keys): float16 bits in uint16.",
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME, content=content),
            data_class=summary_pb2.DATA_CLASS_TENSOR,  # TensorBoard's fast loader keeps only declared classes
        )

    @classmethod
    def from_content(cls, content: bytes) -> ProbeAttention:
        """Parse plugin content; ValueError for content of another (newer) format."""
        fields = json.loads(content.decode())
        if fields.pop("version", None) != FORMAT_VERSION:
            raise ValueError("attention summary of an unknown format version")
        return cls(**fields)


def tag_for(probe: int, kind: str) -> str:
    """`attention_explorer/probe_1/cross`: probes count from 1 in tags, as in the Images tab."""
    return f"attention_explorer/probe_{probe + 1}/{kind}"
