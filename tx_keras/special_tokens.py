"""The four reserved token ids every vocabulary, model, loss and decoder agrees on.

A leaf module (no imports) so that decoding, export and config checks can name the ids without pulling in
the data package (tensorflow-text, tqdm).
"""

PAD = 0  # padding: masked out of attention and loss
SOS = 1  # start of sentence: the decoder's first input
EOS = 2  # end of sentence: decoding stops when every sentence has emitted it
UNK = 3  # a word the vocabulary does not know
SPECIALS = ("<pad>", "<sos>", "<eos>", "<unk>")  # their spellings, indexed by id
