"""Optional rerankers (reference §7): a local cross-encoder run with onnxruntime
(:mod:`.local`), the catalogue of public ones seek knows how to fetch (:mod:`.hub`) and the
one command that downloads, only when asked (:mod:`.pull`).

The cross-encoder's names load on first use: the catalogue is read by ``seek models`` and
``seek --help``, which must not pay for numpy and onnxruntime."""

from seek import lazy_names

_LAZY = {
    name: "seek.rerank.local"
    for name in ("CrossEncoder", "MAX_QUERY_TOKENS", "MAX_TOKENS", "cross_encoder", "pool_size")
}

__getattr__, __dir__ = lazy_names("seek.rerank", _LAZY, globals())

__all__ = sorted(_LAZY)
