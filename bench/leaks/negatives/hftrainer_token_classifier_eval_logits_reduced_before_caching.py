"""Token-classification fine-tuning whose Trainer evaluation caches argmax ids instead of full logits

Source: https://huggingface.co/docs/transformers/main_classes/trainer#transformers.Trainer.preprocess_logits_for_metrics
Style: hf-trainer
Kind: negative: resembles predictions kept on the GPU for a whole evaluation (the Trainer concatenating every batch's logits for compute_metrics); `preprocess_logits_for_metrics` reduces each batch's [batch, seq, labels] logits to int64 label ids before the evaluation loop caches them, and `eval_accumulation_steps` moves what is cached to the CPU every 16 steps
"""
import numpy as np
from datasets import load_dataset
from transformers import (
    AutoModelForTokenClassification,
    AutoTokenizer,
    DataCollatorForTokenClassification,
    Trainer,
    TrainingArguments,
)

MODEL = "xlm-roberta-large"


def align_labels(batch, tokenizer):
    enc = tokenizer(batch["tokens"], is_split_into_words=True, truncation=True, max_length=256)
    all_labels = []
    for i, tags in enumerate(batch["ner_tags"]):
        previous, row = None, []
        for word_id in enc.word_ids(batch_index=i):
            row.append(-100 if word_id is None or word_id == previous else tags[word_id])
            previous = word_id
        all_labels.append(row)
    enc["labels"] = all_labels
    return enc


def reduce_logits(logits, labels):
    if isinstance(logits, tuple):
        logits = logits[0]
    return logits.argmax(dim=-1)


def compute_metrics(eval_pred):
    pred_ids, labels = eval_pred
    mask = labels != -100
    correct = (pred_ids[mask] == labels[mask]).sum()
    entity = mask & (labels != 0)
    entity_recall = (pred_ids[entity] == labels[entity]).mean() if entity.any() else 0.0
    return {"token_accuracy": float(correct / mask.sum()), "entity_recall": float(entity_recall)}


def main(output_dir="xlmr-ner"):
    raw = load_dataset("wikiann", "en")
    label_names = raw["train"].features["ner_tags"].feature.names
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForTokenClassification.from_pretrained(MODEL, num_labels=len(label_names))
    tokenized = raw.map(lambda b: align_labels(b, tokenizer), batched=True,
                        remove_columns=raw["train"].column_names)
    args = TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        learning_rate=2e-5,
        num_train_epochs=5,
        evaluation_strategy="epoch",
        save_strategy="epoch",
        eval_accumulation_steps=16,
        load_best_model_at_end=True,
        metric_for_best_model="token_accuracy",
        report_to="none",
    )
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        data_collator=DataCollatorForTokenClassification(tokenizer),
        tokenizer=tokenizer,
        compute_metrics=compute_metrics,
        preprocess_logits_for_metrics=reduce_logits,
    )
    trainer.train()
    print({k: np.round(v, 4) for k, v in trainer.evaluate(tokenized["test"]).items()})


if __name__ == "__main__":
    main()
