"""Summarisation evaluation keeps every batch of generated ids on the GPU until the end

Source: https://github.com/huggingface/transformers/issues/7158
Style: hf-trainer
Kind: device memory grows without a graph: generated predictions kept on the GPU over a whole evaluation
"""
import torch
from datasets import Dataset
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, Seq2SeqTrainer, Seq2SeqTrainingArguments


class SummaryTrainer(Seq2SeqTrainer):
    def evaluate_rouge_like(self, dataset, max_length=142, num_beams=4):
        loader = self.get_eval_dataloader(dataset)
        self.model.eval()
        all_generated, all_labels = [], []
        for batch in loader:
            batch = self._prepare_inputs(batch)
            with torch.no_grad():
                generated = self.model.generate(batch["input_ids"], attention_mask=batch["attention_mask"],
                                                max_length=max_length, num_beams=num_beams)
            all_generated.append(generated.cpu())
            all_labels.append(batch["labels"].cpu())
        decoded = [self.tokenizer.batch_decode(g, skip_special_tokens=True) for g in all_generated]
        refs = [self.tokenizer.batch_decode(l.clamp(min=0), skip_special_tokens=True) for l in all_labels]
        hits = sum(len(set(p.split()) & set(r.split())) for bp, br in zip(decoded, refs) for p, r in zip(bp, br))
        total = sum(len(r.split()) for br in refs for r in br)
        return {"eval_unigram_recall": hits / max(total, 1)}


def main():
    tokenizer = AutoTokenizer.from_pretrained("facebook/bart-base")
    model = AutoModelForSeq2SeqLM.from_pretrained("facebook/bart-base")
    bills = Dataset.from_dict({"text": ["section 1. the act is amended. " * 60] * 20_000, "summary": ["amends the act"] * 20_000})

    def encode(batch):
        enc = tokenizer(batch["text"], truncation=True, max_length=1024, padding="max_length")
        enc["labels"] = tokenizer(text_target=batch["summary"], max_length=128, padding="max_length", truncation=True)["input_ids"]
        return enc

    bills = bills.map(encode, batched=True, remove_columns=["text", "summary"])
    args = Seq2SeqTrainingArguments("out/billsum", per_device_eval_batch_size=8, report_to=[])
    trainer = SummaryTrainer(model=model, args=args, tokenizer=tokenizer)
    print(trainer.evaluate_rouge_like(bills))


if __name__ == "__main__":
    main()
