"""Extractive QA fine-tuning with accelerate sums output.loss into train_loss every step

Source: https://github.com/pai4451/ML2021/issues/2
Style: accelerate
Kind: loss accumulated across steps with the graph
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModelForQuestionAnswering


def make_loader(n=20_000, seq_len=384, batch_size=8):
    input_ids = torch.randint(1000, 21000, (n, seq_len))
    starts = torch.randint(1, seq_len - 20, (n,))
    data = TensorDataset(input_ids, torch.ones_like(input_ids), starts, starts + torch.randint(1, 20, (n,)))
    return DataLoader(data, batch_size=batch_size, shuffle=True)


def main(num_epoch=2, logging_step=100):
    accelerator = Accelerator(mixed_precision="fp16")
    model = AutoModelForQuestionAnswering.from_pretrained("bert-base-chinese")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_loader = make_loader()
    model, optimizer, train_loader = accelerator.prepare(model, optimizer, train_loader)
    model.train()
    step = 1
    for epoch in range(num_epoch):
        train_loss = train_acc = 0
        for input_ids, attention_mask, start, end in train_loader:
            output = model(input_ids=input_ids, attention_mask=attention_mask, start_positions=start, end_positions=end)
            start_index = torch.argmax(output.start_logits, dim=1)
            end_index = torch.argmax(output.end_logits, dim=1)
            train_acc += ((start_index == start) & (end_index == end)).float().mean()
            train_loss += output.loss  # leak: LL101
            accelerator.backward(output.loss)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % logging_step == 0:
                print(f"Epoch {epoch + 1} | Step {step} | loss = {train_loss.item() / logging_step:.3f}, "
                      f"acc = {train_acc / logging_step:.3f}")
                train_loss = train_acc = 0


if __name__ == "__main__":
    main()
