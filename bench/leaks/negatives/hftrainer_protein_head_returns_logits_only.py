"""ProtT5 encoder + LoRA per-protein classifier with the HF Trainer; the head returns only the loss and the pooled logits

Source: https://github.com/agemagician/ProtTrans/issues/153
Style: hf-trainer
Kind: negative: resembles model outputs gathered over a whole evaluation with the encoder's hidden states and attentions (device-accumulation); the forward asks for neither, the output carries only [batch, num_labels] logits, and eval_accumulation_steps moves them to the CPU every 16 steps
"""
import numpy as np
import torch
import torch.nn as nn
from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import T5EncoderModel, T5Tokenizer, Trainer, TrainingArguments
from transformers.modeling_outputs import SequenceClassifierOutput

CHECKPOINT = "Rostlab/prot_t5_xl_uniref50"


class MeanPooledClassifier(nn.Module):
    def __init__(self, num_labels=2, dropout=0.1):
        super().__init__()
        self.encoder = T5EncoderModel.from_pretrained(CHECKPOINT)
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(self.encoder.config.d_model, num_labels))
        self.num_labels = num_labels

    def forward(self, input_ids, attention_mask, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        logits = self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)


def compute_metrics(eval_pred):
    preds = np.argmax(eval_pred.predictions, axis=-1)
    labels = eval_pred.label_ids
    tp = float(((preds == 1) & (labels == 1)).sum())
    precision = tp / max(float((preds == 1).sum()), 1.0)
    recall = tp / max(float((labels == 1).sum()), 1.0)
    return {"accuracy": float((preds == labels).mean()), "f1": 2 * precision * recall / max(precision + recall, 1e-8)}


def main():
    tokenizer = T5Tokenizer.from_pretrained(CHECKPOINT, do_lower_case=False)
    data = load_dataset("csv", data_files={"train": "data/membrane_train.csv", "valid": "data/membrane_valid.csv"})

    def tokenize(batch):
        seqs = [" ".join(s) for s in batch["sequence"]]
        enc = tokenizer(seqs, max_length=1024, padding="max_length", truncation=True)
        enc["labels"] = batch["label"]
        return enc

    data = data.map(tokenize, batched=True, remove_columns=["sequence", "label"])
    data.set_format("torch")
    model = MeanPooledClassifier()
    model.encoder = get_peft_model(model.encoder, LoraConfig(r=4, lora_alpha=1, target_modules=["q", "k", "v", "o"]))

    args = TrainingArguments(
        output_dir="runs/prott5_membrane",
        per_device_train_batch_size=4,
        per_device_eval_batch_size=8,
        eval_accumulation_steps=16,
        learning_rate=3e-4,
        num_train_epochs=5,
        eval_strategy="epoch",
        save_strategy="epoch",
        report_to="none",
        bf16=torch.cuda.is_available(),
    )
    trainer = Trainer(model=model, args=args, train_dataset=data["train"], eval_dataset=data["valid"], compute_metrics=compute_metrics)
    trainer.train()
    print(trainer.evaluate())


if __name__ == "__main__":
    main()
