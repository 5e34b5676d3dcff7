"""VAE trained with a custom TF2 loop: the annealed KL weight lives in a tf.Variable that the compiled step reads

Source: https://www.tensorflow.org/api_docs/python/tf/function
Style: tf2-loop
Kind: negative: resembles a tf.function called with a Python number that changes every step (LL505, one trace per value); the KL weight is a tf.Variable created once and assigned a new value before each call, so the step is traced once and the variable is captured by reference
"""
import tensorflow as tf

latent_dim = 32


def build_encoder():
    inputs = tf.keras.Input((28, 28, 1))
    x = tf.keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(inputs)
    x = tf.keras.layers.Conv2D(64, 3, strides=2, padding="same", activation="relu")(x)
    x = tf.keras.layers.Flatten()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(2 * latent_dim)(x))


def build_decoder():
    inputs = tf.keras.Input((latent_dim,))
    x = tf.keras.layers.Dense(7 * 7 * 64, activation="relu")(inputs)
    x = tf.keras.layers.Reshape((7, 7, 64))(x)
    x = tf.keras.layers.Conv2DTranspose(32, 3, strides=2, padding="same", activation="relu")(x)
    return tf.keras.Model(inputs, tf.keras.layers.Conv2DTranspose(1, 3, strides=2, padding="same")(x))


encoder, decoder = build_encoder(), build_decoder()
optimizer = tf.keras.optimizers.Adam(1e-3)
kl_weight = tf.Variable(0.0, trainable=False, dtype=tf.float32)
elbo_metric = tf.keras.metrics.Mean()


@tf.function
def train_step(images):
    with tf.GradientTape() as tape:
        mean, logvar = tf.split(encoder(images, training=True), 2, axis=-1)
        z = mean + tf.exp(0.5 * logvar) * tf.random.normal(tf.shape(mean))
        logits = decoder(z, training=True)
        rec = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=images, logits=logits), axis=[1, 2, 3])
        kl = -0.5 * tf.reduce_sum(1 + logvar - tf.square(mean) - tf.exp(logvar), axis=-1)
        loss = tf.reduce_mean(rec + kl_weight * kl)
    variables = encoder.trainable_variables + decoder.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    elbo_metric(loss)


def fit(dataset, epochs=50, warmup_steps=10000):
    step = 0
    for epoch in range(epochs):
        elbo_metric.reset_state()
        for images in dataset:
            kl_weight.assign(min(1.0, step / warmup_steps))
            train_step(images)
            step += 1
        print(f"epoch {epoch}: loss {elbo_metric.result():.2f} kl weight {float(kl_weight.numpy()):.3f}")
