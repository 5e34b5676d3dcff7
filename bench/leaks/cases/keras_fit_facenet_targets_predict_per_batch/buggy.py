"""Distilling a small face-embedding model: the FaceNet teacher's embeddings are computed with predict() for every training batch

Source: https://github.com/serengil/deepface/issues/697
Style: keras-fit
Kind: Keras predict() called on one batch per loop iteration: the frozen FaceNet512 teacher runs `predict` on every batch of face crops inside the training loop; each call sets up its own data adapter and predict function, and system memory creeps up a few MB per batch until training slows to a crawl after a few hundred iterations (in the report, calling the model directly stopped the leak)
"""
import numpy as np
import tensorflow as tf


def build_student(embedding_dim=512):
    base = tf.keras.applications.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights=None, pooling="avg")
    x = tf.keras.layers.Dense(embedding_dim)(base.output)
    x = tf.keras.layers.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1))(x)
    return tf.keras.Model(base.input, x, name="student")


def cosine_distill_loss(y_teacher, y_student):
    y_teacher = tf.math.l2_normalize(y_teacher, axis=-1)
    return tf.reduce_mean(1.0 - tf.reduce_sum(y_teacher * y_student, axis=-1))


def face_batches(paths, batch_size=32, rng=np.random.default_rng(0)):
    while True:
        idx = rng.choice(len(paths), size=batch_size, replace=False)
        crops = []
        for i in idx:
            img = tf.keras.utils.load_img(paths[i], target_size=(160, 160))
            crops.append(tf.keras.utils.img_to_array(img) / 127.5 - 1.0)
        yield np.stack(crops).astype("float32")


def train(face_paths, teacher_path="facenet512.h5", iterations=20000, log_every=200):
    teacher = tf.keras.models.load_model(teacher_path, compile=False)
    teacher.trainable = False
    student = build_student()
    student.compile(optimizer=tf.keras.optimizers.Adam(3e-4), loss=cosine_distill_loss)
    batches = face_batches(face_paths)
    running = []
    for it in range(iterations):
        faces = next(batches)
        targets = teacher.predict(faces, verbose=0)  # leak: LL501
        loss = student.train_on_batch(faces, targets)
        running.append(float(loss))
        if (it + 1) % log_every == 0:
            print(f"iter {it + 1}: distill loss {np.mean(running):.4f}")
            running.clear()
        if (it + 1) % 5000 == 0:
            student.save(f"student_{it + 1}.keras")
    return student
