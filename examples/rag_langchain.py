"""Retrieval-augmented generation in LangChain over pg_chunk, with no model service: a chain
(LCEL) retrieves with knowledge.search's hybrid search and hands the chunks to a stand-in for the
model that answers with the sentence of the context sharing most words with the question.
Replace `extractive_model` with a chat model (`prompt | ChatOpenAI()`, say) for real answers.

    python examples/rag_langchain.py ["dbname=pg_chunk_demo"]

Needs the package (`pip install './clients/python[langchain]'`) and a database with pg_chunk;
it writes examples/sample.txt into the store by its source key, so running it again changes
nothing. docs/clients.md explains each part."""

import re
import sys
from pathlib import Path

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from pg_chunk import StoreDocument, write_documents
from pg_chunk.langchain import PgChunkRetriever

QUESTIONS = ["What makes an eruption explosive?", "How do bees find flowers?", "When was SQL added to PostgreSQL?"]


def words(text: str) -> set[str]:
    """A text's words of four letters or more, cut to four ("finds" and "find" are one)."""
    return {w[:4] for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4}


def extractive_model(inputs: dict) -> dict:
    """The 'model': the sentence of the retrieved chunks that shares most words with the question,
    and the chunk it came from."""
    question = words(inputs["question"])
    sentences = [(s, d) for d in inputs["context"] for s in re.split(r"(?<=[.!?])\s+", d.page_content)]
    answer, source = max(sentences, key=lambda pair: len(question & words(pair[0])))
    return {"answer": answer, "source": source}


def describe(source: Document) -> str:
    m = source.metadata
    return (f'"{m["title"]}" ({m["source"]}), chunk {m["chunk_index"]}, characters {m["char_offset"]} to '
            f'{m["char_offset"] + m["char_length"]}, score {m["score"]:.2f}')


def main() -> None:
    conninfo = sys.argv[1] if len(sys.argv) > 1 else "dbname=pg_chunk_demo"
    sample = Path(__file__).with_name("sample.txt")
    write_documents(conninfo, [StoreDocument(content=sample.read_text(), source_key="examples/sample.txt",
                                             title="Three subjects", source="examples/sample.txt")])

    retriever = PgChunkRetriever(connection=conninfo, k=3)
    chain = {"context": retriever, "question": RunnablePassthrough()} | RunnableLambda(extractive_model)
    for question in QUESTIONS:
        result = chain.invoke(question)
        print(f"Q: {question}\nA: {result['answer']}\n   from {describe(result['source'])}\n")


if __name__ == "__main__":
    main()
