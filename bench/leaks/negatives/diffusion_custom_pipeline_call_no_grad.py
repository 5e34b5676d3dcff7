"""A custom diffusion pipeline updates latents from the UNet output inside a @torch.no_grad() __call__

Source: https://huggingface.co/docs/diffusers/using-diffusers/write_own_pipeline
Style: diffusion
Kind: negative: a sampler's x updated from the model output, under a no_grad decorator
"""
import torch
from diffusers import DDPMScheduler, DiffusionPipeline, UNet2DModel


class UnconditionalPipeline(DiffusionPipeline):
    def __init__(self, unet, scheduler):
        super().__init__()
        self.register_modules(unet=unet, scheduler=scheduler)

    @torch.no_grad()
    def __call__(self, batch_size=1, num_inference_steps=1000, generator=None):
        shape = (batch_size, self.unet.config.in_channels, self.unet.config.sample_size, self.unet.config.sample_size)
        image = torch.randn(shape, generator=generator).to(self.device)
        self.scheduler.set_timesteps(num_inference_steps)
        for t in self.progress_bar(self.scheduler.timesteps):
            model_output = self.unet(image, t).sample
            image = self.scheduler.step(model_output, t, image, generator=generator).prev_sample
        image = (image / 2 + 0.5).clamp(0, 1)
        return image.cpu().permute(0, 2, 3, 1).numpy()


def parse_args():
    import argparse

    parser = argparse.ArgumentParser(description="Sample images from an unconditional UNet.")
    parser.add_argument("--seeds", type=int, default=100)
    return parser.parse_args()


def main():
    args = parse_args()
    unet = UNet2DModel(sample_size=64, in_channels=3, out_channels=3, block_out_channels=(64, 128, 256, 256),
                       down_block_types=("DownBlock2D",) * 4, up_block_types=("UpBlock2D",) * 4)
    pipeline = UnconditionalPipeline(unet, DDPMScheduler(num_train_timesteps=1000))
    pipeline.to("cuda" if torch.cuda.is_available() else "cpu")
    for seed in range(args.seeds):
        images = pipeline(batch_size=4, generator=torch.manual_seed(seed))
        print(seed, images.shape, float(images.mean()))


if __name__ == "__main__":
    main()
