"""ProtT5 encoder + LoRA, per-protein classification with the HF Trainer: the custom head returns the encoder's hidden states and attentions

Source: https://github.com/agemagician/ProtTrans/issues/153
Style: hf-trainer
Kind: device memory grows without a graph: the model output carries every layer's hidden states and attention maps, and the Trainer's evaluation loop concatenates every output field of every batch over the whole validation set; memory accumulates during validation (eval_accumulation_steps only moves the pile to host RAM)
"""
import numpy as np
import torch
import torch.nn as nn
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import T5EncoderModel, T5Tokenizer, Trainer, TrainingArguments
from transformers.modeling_outputs import SequenceClassifierOutput

CHECKPOINT = "Rostlab/prot_t5_xl_uniref50"


class PerProteinClassifier(nn.Module):
    def __init__(self, num_labels=10, dropout=0.1):
        super().__init__()
        self.encoder = T5EncoderModel.from_pretrained(CHECKPOINT)
        hidden = self.encoder.config.d_model
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, num_labels))
        self.num_labels = num_labels

    def forward(self, input_ids, attention_mask, labels=None):
        enc = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        mask = attention_mask.unsqueeze(-1).to(enc.last_hidden_state.dtype)
        pooled = (enc.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        logits = self.head(pooled)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))
        return SequenceClassifierOutput(loss=loss, logits=logits)


def compute_metrics(eval_pred):
    logits = eval_pred.predictions[0] if isinstance(eval_pred.predictions, tuple) else eval_pred.predictions
    preds = np.argmax(logits, axis=-1)
    return {"accuracy": float((preds == eval_pred.label_ids).mean())}


def main():
    tokenizer = T5Tokenizer.from_pretrained(CHECKPOINT, do_lower_case=False)
    data = load_dataset("csv", data_files={"train": "data/loc_train.csv", "valid": "data/loc_valid.csv"})

    def tokenize(batch):
        seqs = [" ".join(list(s.replace("U", "X").replace("Z", "X").replace("O", "X").replace("B", "X"))) for s in batch["sequence"]]
        enc = tokenizer(seqs, max_length=1024, padding="max_length", truncation=True)
        enc["labels"] = batch["label"]
        return enc

    data = data.map(tokenize, batched=True, remove_columns=["sequence", "label"])
    data.set_format("torch")

    model = PerProteinClassifier()
    lora = LoraConfig(r=4, lora_alpha=1, lora_dropout=0.0, target_modules=["q", "k", "v", "o"], bias="none")
    model.encoder = get_peft_model(model.encoder, lora)

    args = TrainingArguments(
        output_dir="runs/prott5_lora_loc",
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        gradient_accumulation_steps=2,
        learning_rate=3e-4,
        num_train_epochs=5,
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
        report_to="none",
        bf16=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=data["train"], eval_dataset=data["valid"], compute_metrics=compute_metrics)
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
