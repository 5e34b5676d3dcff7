"""One Accelerator prepares a new model and optimizer for every fine-tuning run; the old ones are never released

Source: https://github.com/huggingface/accelerate/issues/84
Source: https://github.com/huggingface/transformers/issues/15656
Style: accelerate
Kind: a model and optimizer created per run and kept referenced by the shared Accelerator (its lists of prepared objects): GPU memory grows run after run
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def pseudo_labelled_round(round_idx, n=20_000, seq_len=128):
    g = torch.Generator().manual_seed(round_idx)
    ids = torch.randint(1000, 30000, (n, seq_len), generator=g)
    labels = torch.randint(0, 2, (n,), generator=g)
    return TensorDataset(ids, torch.ones_like(ids), labels)


def finetune(accelerator, dataset, epochs=2, lr=2e-5):
    accelerator.free_memory()
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    scheduler = get_linear_schedule_with_warmup(optimizer, 100, epochs * len(loader))
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
    model.train()
    for epoch in range(epochs):
        for ids, mask, labels in loader:
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
    return accelerator.unwrap_model(model).state_dict()


def main(max_iterations=10):
    accelerator = Accelerator(mixed_precision="fp16")
    best = None
    for i in range(max_iterations):
        state = finetune(accelerator, pseudo_labelled_round(i))
        best = {k: v.detach().cpu() for k, v in state.items()}
        accelerator.print(f"round {i} done, allocated {torch.cuda.memory_allocated() / 2**30:.2f} GiB")
    torch.save(best, "self_training_final.pt")


if __name__ == "__main__":
    main()
