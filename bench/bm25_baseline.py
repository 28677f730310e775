"""The pinned standard BM25 of the tool-search evaluation (bench/eval-tools-catalog.mjs).

Reads the input bench/bm25-baseline.mjs exports (every capability's text as our ranker sees it,
per collection; which collections make each corpus; the requests) and writes, per corpus and
request, the keys of the best `k` documents with a score above 0, best first.

    python bench/bm25_baseline.py INPUT.json OUTPUT.json

bm25s with method "lucene", k1 = 1.5, b = 0.75, its English stop words and the Snowball English
stemmer (PyStemmer); bench/bm25-requirements.txt pins every package.
"""

import json
import sys

import bm25s
import Stemmer
from bm25s.tokenization import Tokenizer

K1 = 1.5
B = 0.75
METHOD = "lucene"


def rank_corpus(documents, queries, k):
    """The keys of the best `k` documents of each query (score above 0), best first."""
    tokenizer = Tokenizer(stemmer=Stemmer.Stemmer("english"), stopwords="en")
    corpus_tokens = tokenizer.tokenize([d["text"] for d in documents], return_as="ids", show_progress=False)
    retriever = bm25s.BM25(method=METHOD, k1=K1, b=B)
    retriever.index(corpus_tokens, show_progress=False)
    query_tokens = tokenizer.tokenize([q["text"] for q in queries], update_vocab=False, return_as="ids", show_progress=False)
    found, scores = retriever.retrieve(query_tokens, k=min(k, len(documents)), show_progress=False, n_threads=1)
    out = {}
    for q, rows, row_scores in zip(queries, found, scores):
        out[q["key"]] = [documents[int(i)]["key"] for i, s in zip(rows, row_scores) if s > 0]
    return out


def main(source, target):
    with open(source, encoding="utf-8") as f:
        data = json.load(f)
    rankings = {}
    for corpus, collections in data["corpora"].items():
        documents = [d for c in collections for d in data["collections"][c]]
        queries = [q for q in data["queries"] if q["corpus"] == corpus]
        rankings[corpus] = rank_corpus(documents, queries, data["k"])
    versions = {"bm25s": bm25s.__version__, "PyStemmer": Stemmer.version(), "numpy": __import__("numpy").__version__}
    with open(target, "w", encoding="utf-8") as f:
        json.dump({"versions": versions, "rankings": rankings}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
