"""An Optuna LoRA search loads the full-precision base model every trial; the old ones stay referenced

Source: https://github.com/optuna/optuna/issues/5931
Style: hf-trainer
Kind: a model created per trial and kept alive by the study's callbacks
"""
import gc

import optuna
import torch
from datasets import Dataset
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

MODEL_PATH = "meta-llama/Llama-3.2-3B-Instruct"
tokenizer = AutoTokenizer.from_pretrained(MODEL_PATH)
tokenizer.pad_token = tokenizer.eos_token
data = Dataset.from_dict({"text": ["<|user|>hi<|assistant|>hello"] * 2000}).map(
    lambda b: tokenizer(b["text"], truncation=True, max_length=256, padding="max_length"), batched=True)
data = data.map(lambda b: {"labels": b["input_ids"]}, batched=True)
results = []


def objective(trial):
    learning_rate = trial.suggest_float("learning_rate", 1e-5, 1e-4, log=True)
    rank = trial.suggest_categorical("r", [8, 16, 32])
    model = AutoModelForCausalLM.from_pretrained(MODEL_PATH, torch_dtype=torch.float32, device_map="cuda")
    model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=["q_proj", "v_proj"]))
    args = TrainingArguments(f"out/trial{trial.number}", learning_rate=learning_rate, per_device_train_batch_size=4,
                             num_train_epochs=1, save_strategy="no", report_to=[])
    trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=data.select(range(200)))
    trainer.train()
    loss = trainer.evaluate()["eval_loss"]
    results.append({"trial": trial.number, "loss": loss})
    del trainer, model
    gc.collect()
    torch.cuda.empty_cache()
    return loss


if __name__ == "__main__":
    study = optuna.create_study(direction="minimize")
    study.optimize(objective, n_trials=20, gc_after_trial=True)
    gc.collect()
    print(sorted(results, key=lambda r: r["loss"])[0]["trial"])
