"""SetFit hyperparameter search: every trial's model_init loads a new body while the last one is still held

Source: https://github.com/huggingface/setfit/issues/311
Style: hf-trainer
Kind: a model created per trial while the previous ones stay referenced
"""
from datasets import Dataset
from setfit import SetFitModel, Trainer, TrainingArguments

MODEL_ID = "sentence-transformers/paraphrase-mpnet-base-v2"


def model_init(params):
    params = params or {}
    return SetFitModel.from_pretrained(MODEL_ID, **{k: v for k, v in params.items() if k in ("multi_target_strategy",)})


def hp_space(trial):
    return {
        "body_learning_rate": trial.suggest_float("body_learning_rate", 1e-6, 1e-3, log=True),
        "num_epochs": trial.suggest_int("num_epochs", 1, 3),
        "batch_size": trial.suggest_categorical("batch_size", [16, 32, 64]),
        "seed": trial.suggest_int("seed", 1, 40),
    }


def parse_args():
    import argparse

    parser = argparse.ArgumentParser(description="SetFit hyperparameter search")
    parser.add_argument("--trials", type=int, default=40)
    return parser.parse_args()


def main():
    args = parse_args()
    texts = [f"this is {'good' if i % 2 else 'bad'} example {i}" for i in range(2000)]
    train = Dataset.from_dict({"text": texts[:1600], "label": [i % 2 for i in range(1600)]})
    valid = Dataset.from_dict({"text": texts[1600:], "label": [i % 2 for i in range(400)]})
    trainer = Trainer(model_init=model_init, args=TrainingArguments(), train_dataset=train, eval_dataset=valid)
    best_run = trainer.hyperparameter_search(direction="maximize", hp_space=hp_space, n_trials=args.trials)
    trainer.apply_hyperparameters(best_run.hyperparameters, final_model=True)
    trainer.train()


if __name__ == "__main__":
    main()
