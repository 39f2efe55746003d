"""Makes data/ner/: a named-entity set in the layout run_ner.py reads (JSON lines with "tokens" and
"ner_tags", IOB2 tags as words) from Jane Austen's six novels (data/lm/austen.txt), by a stated
rule rather than by hand:

- Paragraphs (blank-line separated) are cut into sentences after '.', '!' or '?' (not a
  title's period) followed by a space and a capital or a quote; tokens are words (with an inner apostrophe), the titles "Mr.",
  "Mrs.", "Dr." and "St." as one token, and single punctuation marks.
- PER: a run of tokens from PEOPLE (surnames and given names of the novels' characters), with a
  title from TITLES just before it included (B-PER on the title). LOC: a run of tokens from PLACES.
  Everything else is O. A name list word at a sentence's start is tagged too (the lists hold no
  common words).
- Kept: every sentence of 3 to 40 tokens that has an entity, and every 8th one that has none.
  Shuffled with seed 13; the first 400 are the validation split, the next 3,000 train.

Run: python3 scripts/make_ner_data.py (any Python 3; no packages).
"""
import json
import os
import random
import re

TITLES = {"Mr.", "Mrs.", "Miss", "Lady", "Sir", "Colonel", "Captain", "Admiral", "Dr.", "Lord"}
PEOPLE = set("""
Elizabeth Darcy Bennet Bennets Jane Bingley Bingleys Wickham Lydia Kitty Mary Collins Charlotte
Lucas Lucases Gardiner Gardiners Catherine Bourgh Georgiana Fitzwilliam Phillips Denny Forster
Elinor Marianne Dashwood Dashwoods Willoughby Edward Ferrars Brandon Jennings Lucy Steele Palmer
Middleton Middletons Robert Margaret John Fanny Edmund Bertram Bertrams Crawford Crawfords Norris
Price Prices Rushworth Yates Julia Maria Tom Henry Susan William Grant Emma Woodhouse Knightley
Harriet Smith Elton Eltons Churchill Fairfax Weston Westons Bates Martin Isabella Perry Goddard
Cole Coles Morland Morlands Tilney Tilneys Thorpe Thorpes Allen Allens Eleanor Anne Elliot Elliots
Wentworth Musgrove Musgroves Louisa Henrietta Benwick Harville Harvilles Croft Crofts Russell Clay
Walter Charles Shepherd Hayter Frederick
""".split())
PLACES = set("""
London Bath Pemberley Longbourn Netherfield Meryton Brighton Derbyshire Hertfordshire Kent Rosings
Hunsford Lambton Barton Norland Cleveland Delaford Devonshire Sussex Combe Mansfield Portsmouth
Northampton Northamptonshire Sotherton Thornton Antigua Highbury Hartfield Randalls Donwell
Enscombe Richmond Surrey Northanger Fullerton Woodston Gloucestershire Kellynch Uppercross Lyme
Somersetshire Camden Winthrop Bristol Oxford Cambridge Scotland Ireland England Weymouth Everingham
Everingham Windsor Yorkshire Plymouth Ramsgate Westerham Exeter Dawlish Liverpool
""".split())
TOKEN = re.compile(r"(?:Mr|Mrs|Dr|St)\.|\w+(?:'\w+)?|[^\w\s]")
# Not after a title's period ("Mrs. Goddard").
SENTENCE_END = re.compile(r"(?<![MD]r\.)(?<!Mrs\.)(?<!St\.)(?<=[.!?])\s+(?=[A-Z\"])")


def tag(tokens):
    tags = ["O"] * len(tokens)
    i = 0
    while i < len(tokens):
        kind = "PER" if tokens[i] in PEOPLE else "LOC" if tokens[i] in PLACES else None
        if kind is None:
            i += 1
            continue
        start = i - 1 if kind == "PER" and i > 0 and tokens[i - 1] in TITLES else i
        end = i
        names = PEOPLE if kind == "PER" else PLACES
        while end + 1 < len(tokens) and tokens[end + 1] in names:
            end += 1
        tags[start] = "B-" + kind
        for j in range(start + 1, end + 1):
            tags[j] = "I-" + kind
        i = end + 1
    return tags


def main():
    root = os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(root, "data", "lm", "austen.txt"), encoding="utf-8") as f:
        paragraphs = [" ".join(p.split()) for p in f.read().split("\n\n")]
    rows, untagged = [], 0
    for paragraph in paragraphs:
        for sentence in SENTENCE_END.split(paragraph):
            tokens = TOKEN.findall(sentence)
            if not 3 <= len(tokens) <= 40:
                continue
            tags = tag(tokens)
            if all(t == "O" for t in tags):
                untagged += 1
                if untagged % 8:
                    continue
            rows.append({"tokens": tokens, "ner_tags": tags})
    random.Random(13).shuffle(rows)
    out = os.path.join(root, "data", "ner")
    os.makedirs(out, exist_ok=True)
    for name, part in (("austen-ner-validation.jsonl", rows[:400]),
                       ("austen-ner-train.jsonl", rows[400:3400])):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            for row in part:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(name, len(part), "sentences")


if __name__ == "__main__":
    main()
