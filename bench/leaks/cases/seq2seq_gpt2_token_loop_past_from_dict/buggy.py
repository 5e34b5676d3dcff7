"""Token-by-token GPT-2 continuation reads past_key_values from the output dict with autograd on

Source: https://github.com/huggingface/transformers/issues/15426
Style: seq2seq
Kind: a kv-cache taken from an output attribute and fed into the next step with its graph
"""
import argparse

import torch
from transformers import GPT2LMHeadModel, GPT2TokenizerFast


def continue_text(model, tokenizer, context, max_new_tokens=300, top_k=40):
    device = next(model.parameters()).device
    input_ids = tokenizer(context, return_tensors="pt").input_ids.to(device)
    with torch.autocast(device_type=device.type, enabled=device.type == "cuda"):
        model_outputs = model(input_ids=input_ids, use_cache=True)
    past = model_outputs["past_key_values"]  # leak: LL103
    last_token = input_ids[:, -1:]
    generated = []
    for _ in range(max_new_tokens):
        logits = model_outputs["logits"][:, -1, :]
        values, indices = torch.topk(logits, top_k)
        choice = torch.multinomial(torch.softmax(values, -1), 1)
        last_token = indices.gather(-1, choice)
        generated.append(last_token.item())
        with torch.autocast(device_type=device.type, enabled=device.type == "cuda"):
            model_outputs = model(input_ids=last_token, past_key_values=past)
        past = model_outputs["past_key_values"]  # leak: LL103
    return tokenizer.decode(generated)


def main():
    parser = argparse.ArgumentParser(description="Write a long story chapter by chapter.")
    parser.add_argument("--model", default="gpt2-medium")
    parser.add_argument("--chapters", type=int, default=50)
    parser.add_argument("--prompt", default="Once upon a time")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = GPT2TokenizerFast.from_pretrained(args.model)
    model = GPT2LMHeadModel.from_pretrained(args.model).to(device).eval()
    story = args.prompt
    for chapter in range(args.chapters):
        story += continue_text(model, tokenizer, story[-2000:])
    print(story)


if __name__ == "__main__":
    main()
