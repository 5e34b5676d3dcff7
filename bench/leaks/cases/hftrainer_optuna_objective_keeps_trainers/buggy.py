"""A hand-written Optuna objective builds a Trainer per trial and keeps each one for the report

Source: https://github.com/huggingface/transformers/issues/9929
Style: hf-trainer
Kind: an Optuna objective creating a model per trial; every trainer (and its model) stays referenced
"""
import optuna
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

MODEL = "roberta-base"
tokenizer = AutoTokenizer.from_pretrained(MODEL)
finished = {}


def encode(n):
    data = Dataset.from_dict({"text": [f"sample {i} " * 30 for i in range(n)], "label": [i % 3 for i in range(n)]})
    return data.map(lambda b: tokenizer(b["text"], truncation=True, padding="max_length", max_length=128), batched=True)


TRAIN, VALID = encode(8000), encode(1000)


def objective(trial):
    args = TrainingArguments(
        f"out/trial-{trial.number}",
        learning_rate=trial.suggest_float("lr", 5e-6, 5e-5, log=True),
        weight_decay=trial.suggest_float("weight_decay", 0.0, 0.1),
        per_device_train_batch_size=16, num_train_epochs=2, eval_strategy="epoch", save_strategy="no", report_to=[],
    )
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=3)
    trainer = Trainer(model=model, args=args, train_dataset=TRAIN, eval_dataset=VALID)
    trainer.train()
    metrics = trainer.evaluate()
    finished[trial.number] = trainer  # leak: new:model-per-call
    return metrics["eval_loss"]


if __name__ == "__main__":
    study = optuna.create_study(direction="minimize")
    study.optimize(objective, n_trials=30)
    best = finished[study.best_trial.number]
    best.save_model("out/best")
