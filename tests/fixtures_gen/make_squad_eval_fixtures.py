#!/usr/bin/env python3
"""SQuAD evaluation fixtures: what the official evaluate-v1.1.py and evaluate-v2.0.py print on
prediction files with tricky cases (articles, punctuation, whitespace, Unicode, several gold
answers, unanswerable questions, no-answer probability ties and thresholds).

The two scripts' algorithms are reproduced below from the published scripts (the SQuAD explorer's
evaluate-v1.1.py and evaluate-v2.0.py), unchanged in logic; only the file handling and the
plotting of the v2.0 script are left out. Run from the repository root with Python 3.11 or
earlier (3.12 sums floats with compensation and may change the last digit); the standard library
is enough. Writes tests/data/squad/eval/: datasets, predictions, no-answer probabilities and
*_expected.txt, the text each script prints (squad_metrics_test compares every value to it).
"""
import collections
import json
import os
import random
import re
import string
import sys

OUT = 'tests/data/squad/eval'


# ---- evaluate-v1.1.py ----
def v1_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r'\b(a|an|the)\b', ' ', text)

    def white_space_fix(text):
        return ' '.join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def v1_f1_score(prediction, ground_truth):
    prediction_tokens = v1_normalize_answer(prediction).split()
    ground_truth_tokens = v1_normalize_answer(ground_truth).split()
    common = collections.Counter(prediction_tokens) & collections.Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def v1_exact_match_score(prediction, ground_truth):
    return v1_normalize_answer(prediction) == v1_normalize_answer(ground_truth)


def v1_metric_max_over_ground_truths(metric_fn, prediction, ground_truths):
    scores_for_ground_truths = []
    for ground_truth in ground_truths:
        score = metric_fn(prediction, ground_truth)
        scores_for_ground_truths.append(score)
    return max(scores_for_ground_truths)


def v1_evaluate(dataset, predictions):
    f1 = exact_match = total = 0
    unanswered = []
    for article in dataset:
        for paragraph in article['paragraphs']:
            for qa in paragraph['qas']:
                total += 1
                if qa['id'] not in predictions:
                    unanswered.append(qa['id'])
                    continue
                ground_truths = list(map(lambda x: x['text'], qa['answers']))
                prediction = predictions[qa['id']]
                exact_match += v1_metric_max_over_ground_truths(
                    v1_exact_match_score, prediction, ground_truths)
                f1 += v1_metric_max_over_ground_truths(v1_f1_score, prediction, ground_truths)
    exact_match = 100.0 * exact_match / total
    f1 = 100.0 * f1 / total
    return {'exact_match': exact_match, 'f1': f1}, unanswered


# ---- evaluate-v2.0.py ----
def make_qid_to_has_ans(dataset):
    qid_to_has_ans = {}
    for article in dataset:
        for p in article['paragraphs']:
            for qa in p['qas']:
                qid_to_has_ans[qa['id']] = bool(qa['answers'])
    return qid_to_has_ans


def normalize_answer(s):
    def remove_articles(text):
        regex = re.compile(r'\b(a|an|the)\b', re.UNICODE)
        return re.sub(regex, ' ', text)

    def white_space_fix(text):
        return ' '.join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def get_tokens(s):
    if not s:
        return []
    return normalize_answer(s).split()


def compute_exact(a_gold, a_pred):
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    gold_toks = get_tokens(a_gold)
    pred_toks = get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1


def get_raw_scores(dataset, preds):
    exact_scores = {}
    f1_scores = {}
    for article in dataset:
        for p in article['paragraphs']:
            for qa in p['qas']:
                qid = qa['id']
                gold_answers = [a['text'] for a in qa['answers'] if normalize_answer(a['text'])]
                if not gold_answers:
                    gold_answers = ['']
                if qid not in preds:
                    print('Missing prediction for %s' % qid)
                    continue
                a_pred = preds[qid]
                exact_scores[qid] = max(compute_exact(a, a_pred) for a in gold_answers)
                f1_scores[qid] = max(compute_f1(a, a_pred) for a in gold_answers)
    return exact_scores, f1_scores


def apply_no_ans_threshold(scores, na_probs, qid_to_has_ans, na_prob_thresh):
    new_scores = {}
    for qid, s in scores.items():
        pred_na = na_probs[qid] > na_prob_thresh
        if pred_na:
            new_scores[qid] = float(not qid_to_has_ans[qid])
        else:
            new_scores[qid] = s
    return new_scores


def make_eval_dict(exact_scores, f1_scores, qid_list=None):
    if not qid_list:
        total = len(exact_scores)
        return collections.OrderedDict([
            ('exact', 100.0 * sum(exact_scores.values()) / total),
            ('f1', 100.0 * sum(f1_scores.values()) / total),
            ('total', total),
        ])
    else:
        total = len(qid_list)
        return collections.OrderedDict([
            ('exact', 100.0 * sum(exact_scores[k] for k in qid_list) / total),
            ('f1', 100.0 * sum(f1_scores[k] for k in qid_list) / total),
            ('total', total),
        ])


def merge_eval(main_eval, new_eval, prefix):
    for k in new_eval:
        main_eval['%s_%s' % (prefix, k)] = new_eval[k]


def find_best_thresh(preds, scores, na_probs, qid_to_has_ans):
    num_no_ans = sum(1 for k in qid_to_has_ans if not qid_to_has_ans[k])
    cur_score = num_no_ans
    best_score = cur_score
    best_thresh = 0.0
    qid_list = sorted(na_probs, key=lambda k: na_probs[k])
    for i, qid in enumerate(qid_list):
        if qid not in scores:
            continue
        if qid_to_has_ans[qid]:
            diff = scores[qid]
        else:
            if preds[qid]:
                diff = -1
            else:
                diff = 0
        cur_score += diff
        if cur_score > best_score:
            best_score = cur_score
            best_thresh = na_probs[qid]
    return 100.0 * best_score / len(scores), best_thresh


def find_all_best_thresh(main_eval, preds, exact_raw, f1_raw, na_probs, qid_to_has_ans):
    best_exact, exact_thresh = find_best_thresh(preds, exact_raw, na_probs, qid_to_has_ans)
    best_f1, f1_thresh = find_best_thresh(preds, f1_raw, na_probs, qid_to_has_ans)
    main_eval['best_exact'] = best_exact
    main_eval['best_exact_thresh'] = exact_thresh
    main_eval['best_f1'] = best_f1
    main_eval['best_f1_thresh'] = f1_thresh


def v2_main(dataset, preds, na_probs=None, na_prob_thresh=1.0):
    """main() of evaluate-v2.0.py; returns what it prints."""
    has_na_file = na_probs is not None
    if not has_na_file:
        na_probs = {k: 0.0 for k in preds}
    qid_to_has_ans = make_qid_to_has_ans(dataset)
    has_ans_qids = [k for k, v in qid_to_has_ans.items() if v]
    no_ans_qids = [k for k, v in qid_to_has_ans.items() if not v]
    exact_raw, f1_raw = get_raw_scores(dataset, preds)
    exact_thresh = apply_no_ans_threshold(exact_raw, na_probs, qid_to_has_ans, na_prob_thresh)
    f1_thresh = apply_no_ans_threshold(f1_raw, na_probs, qid_to_has_ans, na_prob_thresh)
    out_eval = make_eval_dict(exact_thresh, f1_thresh)
    if has_ans_qids:
        has_ans_eval = make_eval_dict(exact_thresh, f1_thresh, qid_list=has_ans_qids)
        merge_eval(out_eval, has_ans_eval, 'HasAns')
    if no_ans_qids:
        no_ans_eval = make_eval_dict(exact_thresh, f1_thresh, qid_list=no_ans_qids)
        merge_eval(out_eval, no_ans_eval, 'NoAns')
    if has_na_file:
        find_all_best_thresh(out_eval, preds, exact_raw, f1_raw, na_probs, qid_to_has_ans)
    return json.dumps(out_eval, indent=2)


# ---- the cases ----
def question(qid, answers, context='', question_text='?'):
    answers = [{'text': a, 'answer_start': max(context.find(a), 0)} for a in answers]
    return {'id': qid, 'question': question_text, 'answers': answers}


# (id, gold answers, prediction or None for a question left unanswered)
TRICKY = [
    ('articles', ['Eiffel Tower'], 'The Eiffel Tower'),
    ('articles-inside', ['apple day'], 'an apple a day'),
    ('article-prefix-word', ['theatre anarchy'], 'theatre anarchy the'),
    ('case', ['THE BRONCOS'], 'broncos'),
    ('punctuation', ['U.S.A.'], 'USA'),
    ('punctuation-split', ['New-York'], 'new york'),
    ('apostrophe', ["l'amour"], 'lamour'),
    ('underscore-article', ['the_end'], 'theend'),
    ('whitespace', ['New York'], '  New\tYork\n '),
    ('several-golds', ['Denver Broncos', 'the Broncos', 'Broncos of Denver'], 'Denver'),
    ('several-golds-exact', ['Carolina Panthers', 'Panthers'], 'the Panthers!'),
    ('repeated-tokens', ['cat sat sat'], 'the the cat cat sat'),
    ('no-overlap', ['Santa Clara'], 'Levi Stadium'),
    ('empty-prediction', ['1,000'], ''),
    ('only-articles', ['a'], 'the an a'),
    ('numbers', ['1,000'], '1000'),
    ('decimal', ['3.14'], '314'),
    ('unicode-accent', ['Frédéric Chopin'], 'frédéric  chopin'),
    ('unicode-dotted-i', ['İstanbul'], 'i̇stanbul'),
    ('nbsp', ['New\u00a0York'], 'new york'),
    ('ideographic-space', ['東京\u3000タワー'], '東京 タワー'),
    ('info-separator', ['a\x1cb'], 'b a'),
    ('zero-width-space', ['new\u200byork'], 'new york'),
    ('article-before-symbol', ['a€'], '€'),
    ('article-before-mark', ['a\u0301 b'], 'b'),
    ('article-in-word', ['año'], 'ano'),
    ('em-dash', ['1990—2000'], '1990 2000'),
    ('arabic-digits', ['٣ ٤'], '٣'),
    ('long-partial', ['the quick brown fox jumps over the lazy dog'], 'a quick fox, a lazy dog'),
    ('unanswered', ['something'], None),
]

TRICKY_V2 = [
    # (id, gold answers ([] = unanswerable), prediction, no-answer probability)
    ('has-exact', ['Normandy'], 'normandy', 0.1),
    ('has-partial', ['10th and 11th centuries'], 'the 10th century', 0.3),
    ('has-empty-pred', ['Rollo'], '', 0.9),
    ('has-wrong', ['Charles III'], 'Louis', 0.3),
    ('no-empty-pred', [], '', 0.8),
    ('no-wrong-pred', [], 'Vikings', 0.3),
    ('no-article-pred', [], 'the', 0.2),
    ('gold-only-article', ['The'], 'an', 0.5),
    ('gold-mixed', ['the', 'Franks'], 'Franks', 0.95),
    ('above-thresh-has', ['Denmark'], 'Denmark', 1.5),
    ('above-thresh-no', [], 'Norway', 2.0),
    ('tie-a', ['William'], 'William the Conqueror', 0.3),
    ('tie-b', [], 'Harold', 0.3),
    ('several', ['Duke of Normandy', 'the duke', 'Richard I'], 'Richard', 0.05),
]


def tricky_v1():
    context = ' | '.join(gold for _, golds, _ in TRICKY for gold in golds)
    qas = [question(qid, golds, context) for qid, golds, _ in TRICKY]
    dataset = {'version': '1.1', 'data': [{'title': 'Tricky', 'paragraphs': [
        {'context': context, 'qas': qas}]}]}
    predictions = {qid: pred for qid, _, pred in TRICKY if pred is not None}
    return dataset, predictions


def tricky_v2():
    context = 'The Normans gave their name to Normandy.'
    qas = []
    for qid, golds, _, _ in TRICKY_V2:
        qa = question(qid, golds, context)
        qa['is_impossible'] = not golds
        qas.append(qa)
    dataset = {'version': 'v2.0', 'data': [{'title': 'Tricky', 'paragraphs': [
        {'context': context, 'qas': qas}]}]}
    predictions = {qid: pred for qid, _, pred, _ in TRICKY_V2}
    # An id the dataset lacks (the threshold search skips it), and the probabilities in an
    # order other than the dataset's so that ties are broken by the file order.
    na_probs = {'not-in-dataset': 0.0}
    for qid, _, _, prob in reversed(TRICKY_V2):
        na_probs[qid] = prob
    return dataset, predictions, na_probs


def perturbed(rng, gold, context):
    """A prediction near a gold answer: the usual ways a model is almost right."""
    choice = rng.randrange(8)
    words = gold.split()
    if choice == 0:
        return gold
    if choice == 1:
        return 'the ' + gold.lower() + '.'
    if choice == 2 and len(words) > 1:
        return ' '.join(words[:-1])
    if choice == 3:
        start = max(context.find(gold), 0)
        return context[max(0, start - rng.randrange(1, 20)):start + len(gold) + rng.randrange(0, 20)]
    if choice == 4:
        return gold.upper() + ' ,'
    if choice == 5:
        return ' '.join(context.split()[rng.randrange(max(1, len(context.split()) - 3)):][:3])
    if choice == 6:
        return ''
    return gold + ' ' + gold


def real_predictions(dataset, seed, empty_rate):
    """Predictions near the gold answers (near a plausible answer, or empty at `empty_rate`, for
    unanswerable questions), with no-answer probabilities that lean the right way."""
    rng = random.Random(seed)
    predictions, na_probs = {}, {}
    for article in dataset['data']:
        for paragraph in article['paragraphs']:
            context = paragraph['context']
            for qa in paragraph['qas']:
                golds = [a['text'] for a in qa['answers']] or \
                        [a['text'] for a in qa.get('plausible_answers', [])] or ['']
                gold = rng.choice(golds)
                answerable = bool(qa['answers'])
                empty = not answerable and rng.random() < empty_rate
                predictions[qa['id']] = '' if empty else perturbed(rng, gold, context)
                # One decimal: many ties for the threshold search.
                na_probs[qa['id']] = round(rng.random() * 0.7 + (0.0 if answerable else 0.4), 1)
    return predictions, na_probs


def write_json(name, value):
    with open(os.path.join(OUT, name), 'w', encoding='utf-8') as f:
        json.dump(value, f, ensure_ascii=False, indent=1)
        f.write('\n')


def write_text(name, text):
    with open(os.path.join(OUT, name), 'w', encoding='utf-8') as f:
        f.write(text + '\n')


def main():
    if sys.version_info >= (3, 12):
        sys.exit('use Python 3.11 or earlier: 3.12 changed how sum() adds floats')
    os.makedirs(OUT, exist_ok=True)

    dataset, predictions = tricky_v1()
    write_json('tricky_v1.json', dataset)
    write_json('tricky_v1_predictions.json', predictions)
    result, unanswered = v1_evaluate(dataset['data'], predictions)
    assert unanswered == ['unanswered']
    write_text('tricky_v1_expected.txt', json.dumps(result))

    dataset, predictions, na_probs = tricky_v2()
    write_json('tricky_v2.json', dataset)
    write_json('tricky_v2_predictions.json', predictions)
    write_json('tricky_v2_na_probs.json', na_probs)
    write_text('tricky_v2_expected.txt', v2_main(dataset['data'], predictions, na_probs))
    write_text('tricky_v2_no_na_probs_expected.txt', v2_main(dataset['data'], predictions))

    with open('data/qa/squad-v1.1-dev-first4.json', encoding='utf-8') as f:
        dev_v1 = json.load(f)
    predictions, _ = real_predictions(dev_v1, seed=11, empty_rate=0.0)
    for qid in list(predictions)[::97]:
        del predictions[qid]  # a few unanswered questions
    write_json('dev_v1_predictions.json', predictions)
    write_text('dev_v1_expected.txt', json.dumps(v1_evaluate(dev_v1['data'], predictions)[0]))

    with open('data/qa/squad-v2.0-dev-first5.json', encoding='utf-8') as f:
        dev_v2 = json.load(f)
    predictions, na_probs = real_predictions(dev_v2, seed=12, empty_rate=0.5)
    write_json('dev_v2_predictions.json', predictions)
    write_json('dev_v2_na_probs.json', na_probs)
    write_text('dev_v2_expected.txt', v2_main(dev_v2['data'], predictions, na_probs))
    write_text('dev_v2_thresh_0.5_expected.txt',
               v2_main(dev_v2['data'], predictions, na_probs, na_prob_thresh=0.5))


if __name__ == '__main__':
    main()
