"""Gradient-based pulse optimisation whose propagation step wraps fixed time constants in new tf.Variables on every evaluation

Source: https://github.com/q-optimize/c3/issues/38
Source: https://github.com/q-optimize/c3/pull/46
Style: tf2-loop
Kind: a tf.Variable created per call (family variable-per-call): every goal evaluation inside the GradientTape creates fresh variables for dt and the gate duration, and memory rises strongly with every optimizer iteration; plain tf.constant values keep it flat
"""
import numpy as np
import tensorflow as tf

N_LEVELS = 3
N_SLICES = 400


def drive_hamiltonians():
    a = np.diag(np.sqrt(np.arange(1, N_LEVELS)), k=1).astype(np.complex128)
    h0 = np.diag([0.0, 5.0, 9.8]).astype(np.complex128) * 2 * np.pi
    return tf.constant(h0), tf.constant(a + a.conj().T), tf.constant(1j * (a.conj().T - a))


class Experiment:
    def __init__(self, t_final=20.0):
        self.h0, self.hx, self.hy = drive_hamiltonians()
        self.t_start, self.t_end = 0.0, t_final
        self.ts = np.linspace(self.t_start, self.t_end, N_SLICES + 1)

    def signal(self, params):
        t = tf.constant(self.ts[:-1], tf.float64)
        envelope = tf.sin(np.pi * t / self.t_end) ** 2
        basis = tf.stack([tf.cos(k * np.pi * t / self.t_end) for k in range(params.shape[0] // 2)], axis=1)
        half = params.shape[0] // 2
        return envelope * tf.linalg.matvec(basis, params[:half]), envelope * tf.linalg.matvec(basis, params[half:])

    def propagation(self, params):
        sig_x, sig_y = self.signal(params)
        dt = tf.constant(self.ts[1] - self.ts[0], dtype=tf.complex128)
        h = self.h0[None] + tf.cast(sig_x, tf.complex128)[:, None, None] * self.hx[None] + \
            tf.cast(sig_y, tf.complex128)[:, None, None] * self.hy[None]
        d_us = tf.linalg.expm(-1j * h * dt)
        u = tf.eye(N_LEVELS, dtype=tf.complex128)
        for k in range(N_SLICES):
            u = tf.matmul(d_us[k], u)
        return u

    def frame_rotation(self, u):
        t_final = tf.constant(self.t_end - self.t_start, dtype=tf.complex128)
        phases = tf.exp(1j * tf.linalg.diag_part(self.h0) * t_final)
        return tf.matmul(tf.linalg.diag(phases), u)


def infidelity(u, target):
    overlap = tf.linalg.trace(tf.matmul(target, u[:2, :2], adjoint_a=True))
    return 1.0 - tf.abs(overlap) ** 2 / 4.0


def optimize(iterations=5000, n_params=16):
    exp = Experiment()
    target = tf.constant([[0, 1], [1, 0]], tf.complex128)
    params = tf.Variable(np.random.default_rng(0).normal(0, 0.1, n_params), dtype=tf.float64)
    optimizer = tf.keras.optimizers.Adam(learning_rate=5e-3)
    for it in range(iterations):
        with tf.GradientTape() as tape:
            goal = infidelity(exp.frame_rotation(exp.propagation(params)), target)
        grads = tape.gradient(goal, [params])
        optimizer.apply_gradients(zip(grads, [params]))
        if it % 50 == 0:
            print(f"iteration {it}: infidelity {float(goal):.6f}")
    return params.numpy()


if __name__ == "__main__":
    optimize()
