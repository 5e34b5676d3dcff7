"""Test-set evaluation of a region-guided report generator loads the BERTScore module inside the per-batch helper

Source: https://github.com/ttanida/rgrg/pull/27
Style: seq2seq
Kind: a model built per call of a function run for every batch: evaluate.load("bertscore") (a RoBERTa-large scorer on the GPU) is created again for each batch to drop near-duplicate sentences, and GPU memory climbs batch after batch until out of memory even at batch size 1
"""
import evaluate
import spacy
import torch
from tqdm import tqdm

BERTSCORE_SIMILARITY_THRESHOLD = 0.9


def remove_duplicate_sentences(sentences, bert_score):
    kept = []
    for sentence in sentences:
        if not kept:
            kept.append(sentence)
            continue
        scores = bert_score.compute(predictions=[sentence] * len(kept), references=kept, lang="en")["f1"]
        if max(scores) < BERTSCORE_SIMILARITY_THRESHOLD:
            kept.append(sentence)
    return kept


def get_generated_reports(generated_sentences, selected_regions, sentence_tokenizer, bert_score):
    """generated_sentences: one sentence per selected region (flattened over the batch);
    selected_regions: [batch, 29] bool; bert_score: the BERTScore module, loaded once by the caller.
    Returns one report string per image."""
    reports, cursor = [], 0
    for regions in selected_regions:
        n = int(regions.sum())
        region_sentences = generated_sentences[cursor:cursor + n]
        cursor += n
        split = [s.text for text in region_sentences for s in sentence_tokenizer(text).sents]
        reports.append(" ".join(remove_duplicate_sentences(split, bert_score)))
    return reports


def evaluate_language_model_on_test_set(model, test_loader, tokenizer, device, max_new_tokens=300):
    sentence_tokenizer = spacy.load("en_core_web_trf")
    bert_score = evaluate.load("bertscore")
    generated_reports, reference_reports = [], []
    model.eval()
    with torch.no_grad():
        for batch in tqdm(test_loader):
            images = batch["images"].to(device, non_blocking=True)
            output = model.generate(images, max_length=max_new_tokens, num_beams=4, early_stopping=True)
            if output == -1:  # no region was selected for any image of the batch
                continue
            beam_ids, selected_regions, _, _ = output
            region_sentences = tokenizer.batch_decode(beam_ids, skip_special_tokens=True, clean_up_tokenization_spaces=True)
            reports = get_generated_reports(region_sentences, selected_regions.cpu(), sentence_tokenizer, bert_score)
            generated_reports.extend(reports)
            reference_reports.extend(batch["reference_reports"])
    return generated_reports, reference_reports


def main(model, test_loader, tokenizer):
    device = torch.device("cuda")
    model.to(device)
    generated, references = evaluate_language_model_on_test_set(model, test_loader, tokenizer, device)
    bleu = evaluate.load("bleu").compute(predictions=generated, references=[[r] for r in references])
    meteor = evaluate.load("meteor").compute(predictions=generated, references=references)
    print({"bleu_4": bleu["bleu"], "meteor": meteor["meteor"]})
