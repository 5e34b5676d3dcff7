"""T5 fine-tuning with Seq2SeqTrainer: the periodic validation keeps every batch's vocabulary logits on the GPU

Source: https://github.com/huggingface/transformers/issues/7926
Style: hf-trainer
Kind: device memory kept for a whole evaluation: with `compute_metrics` set and no `eval_accumulation_steps`, the Trainer's evaluation loop concatenates the [batch, target_len, 32128] logits of every validation batch on the GPU; the run dies with CUDA OOM in the validation loop, sometimes in the first epoch, sometimes in the second
"""
import numpy as np
from datasets import load_dataset
from transformers import (
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    T5ForConditionalGeneration,
)

MODEL = "t5-base"
MAX_SRC, MAX_TGT = 512, 128


def preprocess(batch, tokenizer):
    inputs = ["summarize: " + doc for doc in batch["document"]]
    enc = tokenizer(inputs, max_length=MAX_SRC, truncation=True)
    labels = tokenizer(text_target=batch["summary"], max_length=MAX_TGT, truncation=True)
    enc["labels"] = labels["input_ids"]
    return enc


def make_metrics(tokenizer):
    def compute_metrics(eval_pred):
        logits, labels = eval_pred
        if isinstance(logits, tuple):
            logits = logits[0]
        pred_ids = logits.argmax(-1)
        mask = labels != -100
        token_acc = float((pred_ids[mask] == labels[mask]).mean())
        return {"token_accuracy": token_acc}

    return compute_metrics


def main(output_dir="t5-xsum"):
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = T5ForConditionalGeneration.from_pretrained(MODEL)
    raw = load_dataset("xsum")
    tokenized = raw.map(lambda b: preprocess(b, tokenizer), batched=True,
                        remove_columns=raw["train"].column_names)
    args = Seq2SeqTrainingArguments(  # leak: LL202
        output_dir=output_dir,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        learning_rate=3e-4,
        num_train_epochs=3,
        evaluation_strategy="steps",
        eval_steps=2000,
        save_steps=2000,
        logging_steps=100,
        fp16=False,
        report_to="none",
    )
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=tokenized["train"],
        eval_dataset=tokenized["validation"],
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        tokenizer=tokenizer,
        compute_metrics=make_metrics(tokenizer),
    )
    trainer.train()
    metrics = trainer.evaluate()
    print({k: np.round(v, 4) for k, v in metrics.items()})


if __name__ == "__main__":
    main()
