"""How close two float32 computations of one function must be to count as the same function.

Kernel libraries (TensorFlow's Eigen kernels, oneDNN's) and CPU kinds (AVX2, AVX-512) sum in different
orders, and graph rewrites fuse ops differently from eager calls, so one model with one set of weights
gives float32 outputs that differ in their last bits from machine to machine. Measured 2026-12-02 on the
AVX-512 EPYC (family 25 model 17) against tests/fixtures written on the AVX2 EPYC (family 25 model 1), tiny
fixture models with logits up to ~10: logits differ by up to 7.6e-06 with oneDNN on and 9.7e-06 with it
off, cross-attention weights by up to 6.8e-06. FLOAT32 allows three times that, and stays far below a real
change: moving one weight by 1e-3 moves those logits by ~1e-3 (median over all weights; 7e-05 for the
smallest-logit model).

Use exact equality instead where one computation is repeated on one machine (a deterministic run against
itself, a resumed run against an uninterrupted one), and for token ids where no near-tie can flip an argmax.
"""

FLOAT32 = {"rtol": 1e-5, "atol": 3e-5}
