"""Interpolation Consistency Training on CIFAR-10: the ramped consistency weight reaches the tf.function step as a Python float

Source: https://github.com/ryancheunggit/tensorflow2_model_zoo/issues/13
Style: tf2-loop
Kind: a tf.function called with a Python number that changes: the consistency weight `w` follows a sigmoid ramp-up over epochs and is passed to `train_step` as a Python float, so every new value traces and keeps another concrete graph of the whole training step
"""
import math

import numpy as np
import tensorflow as tf

NUM_CLASSES = 10


def conv_net():
    inputs = tf.keras.Input((32, 32, 3))
    x = inputs
    for filters in (96, 192, 192):
        x = tf.keras.layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        x = tf.keras.layers.BatchNormalization()(x)
        x = tf.keras.layers.LeakyReLU(0.1)(x)
        x = tf.keras.layers.MaxPool2D()(x)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, tf.keras.layers.Dense(NUM_CLASSES)(x))


student = conv_net()
teacher = conv_net()
teacher.set_weights(student.get_weights())
optimizer = tf.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True)
ce = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def sigmoid_rampup(epoch, length=80):
    phase = 1.0 - min(epoch, length) / length
    return math.exp(-5.0 * phase * phase)


@tf.function
def train_step(x_lab, y_lab, x_unl, w, alpha=1.0):
    batch = tf.shape(x_unl)[0]
    perm = tf.random.shuffle(tf.range(batch))
    g1 = tf.random.gamma([batch, 1, 1, 1], alpha)
    g2 = tf.random.gamma([batch, 1, 1, 1], alpha)
    lam = g1 / (g1 + g2)
    t_logits = teacher(x_unl, training=True)
    t_probs = tf.nn.softmax(t_logits)
    mixed_x = lam * x_unl + (1 - lam) * tf.gather(x_unl, perm)
    mixed_t = tf.reshape(lam, [-1, 1]) * t_probs + (1 - tf.reshape(lam, [-1, 1])) * tf.gather(t_probs, perm)
    with tf.GradientTape() as tape:
        sup = ce(y_lab, student(x_lab, training=True))
        cons = tf.reduce_mean(tf.square(tf.nn.softmax(student(mixed_x, training=True)) - mixed_t))
        loss = sup + w * cons
    grads = tape.gradient(loss, student.trainable_variables)
    optimizer.apply_gradients(zip(grads, student.trainable_variables))
    for t_var, s_var in zip(teacher.variables, student.variables):
        t_var.assign(0.999 * t_var + 0.001 * s_var)
    return sup, cons


def run(labeled_ds, unlabeled_ds, epochs=400, w_max=100.0):
    for epoch in range(epochs):
        w = w_max * sigmoid_rampup(epoch)
        sups, conss = [], []
        for (x_lab, y_lab), x_unl in zip(labeled_ds, unlabeled_ds):
            sup, cons = train_step(x_lab, y_lab, x_unl, tf.constant(w, tf.float32))
            sups.append(float(sup))
            conss.append(float(cons))
        print(f"epoch {epoch}: w={w:.2f} sup={np.mean(sups):.4f} cons={np.mean(conss):.5f}")
        teacher.save_weights(f"ict_teacher_{epoch:03d}.h5")
