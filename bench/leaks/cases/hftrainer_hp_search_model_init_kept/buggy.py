"""Hyperparameter search with model_init keeps the previous trial's model alive on the GPU

Source: https://github.com/huggingface/transformers/issues/13019
Style: hf-trainer
Kind: a model created per trial while the previous one is still referenced
"""
from datasets import Dataset
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments

CHECKPOINT = "facebook/bart-large"
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
loaded_models = []


def model_init(trial=None):
    model = AutoModelForSeq2SeqLM.from_pretrained(CHECKPOINT)
    loaded_models.append(model)  # leak: new:model-per-call
    return model


def hp_space(trial):
    return {
        "learning_rate": trial.suggest_float("learning_rate", 1e-6, 1e-4, log=True),
        "num_train_epochs": trial.suggest_int("num_train_epochs", 1, 3),
        "per_device_train_batch_size": trial.suggest_categorical("per_device_train_batch_size", [4, 8]),
    }


def tokenized(n):
    docs = [f"document {i}: " + "the committee met and discussed the budget. " * 20 for i in range(n)]
    data = Dataset.from_dict({"document": docs, "summary": [f"summary {i}" for i in range(n)]})

    def encode(batch):
        enc = tokenizer(batch["document"], truncation=True, max_length=512)
        enc["labels"] = tokenizer(text_target=batch["summary"], truncation=True, max_length=64)["input_ids"]
        return enc

    return data.map(encode, batched=True, remove_columns=["document", "summary"])


def main():
    args = Seq2SeqTrainingArguments("out/hp-search", eval_strategy="epoch", save_strategy="no", report_to=[])
    trainer = Seq2SeqTrainer(
        model_init=model_init, args=args, train_dataset=tokenized(4000), eval_dataset=tokenized(400),
        data_collator=DataCollatorForSeq2Seq(tokenizer), tokenizer=tokenizer,
    )
    best = trainer.hyperparameter_search(direction="minimize", backend="optuna", hp_space=hp_space, n_trials=20)
    print(best)


if __name__ == "__main__":
    main()
