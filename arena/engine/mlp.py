"""A multilayer perceptron policy: its ``.npz`` file format and its compiled forward pass.

This module is the one owner of the format: :func:`save_mlp` writes it and
:func:`load_mlp` reads and checks it.  An ``.npz`` file (numpy's zip of
arrays, read with ``allow_pickle=False``, so it holds data and never code)
with these arrays:

==============  ==========================================================
``format``      the string ``gin-arena-mlp-1``
``activation``  ``relu`` or ``tanh`` (after every layer but the last)
``w0 .. wL``    float32 ``[inputs, outputs]`` weights of layer 0..L
``b0 .. bL``    float32 ``[outputs]`` biases
==============  ==========================================================

Layer 0 takes the observation vector, layer L gives one logit per action
id; the player picks the legal action with the largest logit (the first on
a tie).  A 2x256 MLP is ``w0 [d, 256]``, ``w1 [256, 256]``, ``w2 [256, A]``.

:func:`mlp_logits` is the forward pass for one observation, a numba kernel
over the packed weights (:meth:`Mlp.packed`); it skips zero inputs, so the
first layer costs only the observation's non-zero entries (most of an
observation is 0/1 card flags).  :meth:`Mlp.logits` is the same forward pass
batched in numpy (BLAS), for Python callers.
"""

from __future__ import annotations

import io
import lzma
import math
import re
import tokenize
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena.engine._jit import kernel

MLP_FORMAT = "gin-arena-mlp-1"
ACTIVATIONS = ("relu", "tanh")
#: Largest layer width the compiled forward pass takes (its work space is two such vectors).
MAX_WIDTH = 4096
#: Most layers an MLP file may have (hidden layers plus the output layer).
MAX_LAYERS = 16


class MlpError(ValueError):
    """An MLP file or weight set that cannot be used; the message is one line naming it."""


@dataclass(frozen=True)
class Mlp:
    """Weights ``[in, out]`` and biases ``[out]`` of each layer (float32), and the hidden activation."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    activation: str = "relu"

    def __post_init__(self) -> None:
        check_layers(self.weights, self.biases, self.activation, "mlp")

    @property
    def obs_size(self) -> int:
        return int(self.weights[0].shape[0])

    @property
    def num_actions(self) -> int:
        return int(self.weights[-1].shape[1])

    @property
    def widths(self) -> tuple[int, ...]:
        """Input size, each hidden width, output size."""
        return (self.obs_size, *(int(w.shape[1]) for w in self.weights))

    def packed(self) -> tuple[np.ndarray, np.ndarray, int]:
        """``(flat, widths, activation)`` for :func:`mlp_logits`: each layer's weights then biases, flat."""
        parts = []
        for w, b in zip(self.weights, self.biases):
            parts += [w.ravel(), b]
        flat = np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
        return flat, np.array(self.widths, dtype=np.int64), ACTIVATIONS.index(self.activation)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """Logits ``[n, A]`` of a batch of observations ``[n, d]``, in numpy (float32)."""
        x = np.asarray(obs, dtype=np.float32)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            x = x @ w + b
            if i < last:
                x = np.maximum(x, 0, out=x) if self.activation == "relu" else np.tanh(x, out=x)
        return x


def check_layers(weights, biases, activation: str, source: str) -> None:
    """One-line :class:`MlpError` unless the layers chain up: float32 2-d weights, matching biases."""
    if activation not in ACTIVATIONS:
        raise MlpError(f"{source}: activation {activation!r} is not one of {', '.join(ACTIVATIONS)}")
    if not 1 <= len(weights) <= MAX_LAYERS or len(weights) != len(biases):
        raise MlpError(f"{source}: needs 1 to {MAX_LAYERS} layers, each a weight w<i> and a bias b<i>")
    width = None
    for i, (w, b) in enumerate(zip(weights, biases)):
        if not isinstance(w, np.ndarray) or w.dtype != np.float32 or w.ndim != 2:
            raise MlpError(f"{source}: w{i} must be a 2-d float32 array [inputs, outputs]")
        if not isinstance(b, np.ndarray) or b.dtype != np.float32 or b.shape != (w.shape[1],):
            raise MlpError(f"{source}: b{i} must be a float32 array of shape ({w.shape[1]},) to match w{i}")
        if width is not None and w.shape[0] != width:
            raise MlpError(f"{source}: w{i} takes {w.shape[0]} inputs but layer {i - 1} gives {width}")
        if not 1 <= w.shape[0] <= MAX_WIDTH or not 1 <= w.shape[1] <= MAX_WIDTH:
            raise MlpError(f"{source}: w{i} has shape {w.shape}; layers are 1 to {MAX_WIDTH} wide")
        if not (np.isfinite(w).all() and np.isfinite(b).all()):
            raise MlpError(f"{source}: w{i} or b{i} holds a NaN or an infinity")
        width = w.shape[1]


def save_mlp(path: str | Path | io.BytesIO, mlp: Mlp) -> None:
    """Write ``mlp`` in the format :func:`load_mlp` reads."""
    arrays: dict[str, np.ndarray] = {"format": np.array(MLP_FORMAT), "activation": np.array(mlp.activation)}
    for i, (w, b) in enumerate(zip(mlp.weights, mlp.biases)):
        arrays[f"w{i}"] = w
        arrays[f"b{i}"] = b
    np.savez(path, **arrays)  # type: ignore[arg-type]  # numpy's stubs want str keys passed as **kwds


#: Most bytes the arrays of an MLP file may unpack to (16 layers of 4096 x 4096 float32 would be 1 GiB).
MAX_MLP_BYTES = 256 * 1024 * 1024
#: What reading a damaged or hostile ``.npz`` may raise besides MlpError: zipfile's BadZipFile, EOFError,
#: NotImplementedError (a compression method or zip version it lacks), RuntimeError (an encrypted entry),
#: zlib's and LZMA's errors (a stream that does not decompress), OSError (bz2's), ValueError, and numpy's
#: .npy header parsing (tokenize.TokenError, SyntaxError): each is the file's fault, one MlpError line.
NPZ_ERRORS = (
    OSError,
    ValueError,
    zipfile.BadZipFile,
    EOFError,
    NotImplementedError,
    RuntimeError,
    zlib.error,
    lzma.LZMAError,
    tokenize.TokenError,
    SyntaxError,
)
#: The array names an MLP file may hold (``w<i>``, ``b<i>``, ``format``, ``activation``).
_ARRAY_NAME = re.compile(r"(format|activation|[wb](?:0|[1-9][0-9]?))\.npy")


def check_npz(raw: io.BytesIO | Path | str, label: str, max_bytes: int = MAX_MLP_BYTES) -> None:
    """Refuse, before numpy reads a single array, an ``.npz`` that is not plainly an MLP file's arrays.

    Read from the zip's headers and each array's ``.npy`` header alone: at most ``2 * MAX_LAYERS + 2``
    entries, named as the format names them; float32 weights and biases of at most two dimensions of
    at most :data:`MAX_WIDTH`; ``format`` and ``activation`` short strings; no object array (numpy
    stores those as a pickle); each entry exactly as long as its header says its array is, and all of
    them at most ``max_bytes``.  So a header claiming a huge shape, a zip bomb, or a pickle costs no
    memory and runs nothing: :func:`load_mlp` calls this first.
    """
    try:
        with zipfile.ZipFile(raw) as z:
            infos = z.infolist()
            if not 1 <= len(infos) <= 2 * MAX_LAYERS + 2:
                raise MlpError(f"{label}: {len(infos)} arrays; an MLP file holds at most {2 * MAX_LAYERS + 2}")
            total = sum(i.file_size for i in infos)
            if total > max_bytes:
                raise MlpError(f"{label}: the arrays unpack to {total} bytes; the limit is {max_bytes}")
            for info in infos:
                _check_entry(z, info, label)
    except FileNotFoundError:
        raise
    except NPZ_ERRORS as exc:
        if isinstance(exc, MlpError):
            raise
        raise MlpError(f"{label}: not an .npz file of MLP weights ({type(exc).__name__}: {exc})") from None


def _check_entry(z: zipfile.ZipFile, info: zipfile.ZipInfo, label: str) -> None:
    match = _ARRAY_NAME.fullmatch(info.filename)
    if match is None:
        raise MlpError(f"{label}: holds {info.filename[:60]!r}; an MLP file holds w<i>, b<i>, format, activation")
    key = match.group(1)
    with z.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise MlpError(f"{label}: {key} is in .npy format version {version}; 1.0 or 2.0 expected")
        offset = f.tell()
    if dtype.hasobject:
        raise MlpError(f"{label}: {key} is an object array (a pickle); an MLP file holds numbers and text only")
    if key in ("format", "activation"):
        if dtype.kind != "U" or shape != () or dtype.itemsize > 256:
            raise MlpError(f"{label}: {key} must be a short text")
    elif dtype != np.dtype("<f4") or len(shape) != (2 if key[0] == "w" else 1) or max(shape) > MAX_WIDTH:
        dims = "a 2-d" if key[0] == "w" else "a 1-d"
        raise MlpError(
            f"{label}: {key} must be {dims} float32 array of at most {MAX_WIDTH} a side; it is {dtype} {shape}"
        )
    size = offset + math.prod(shape) * dtype.itemsize
    if info.file_size != size:
        raise MlpError(f"{label}: {key} says it is {shape} {dtype} but its entry holds {info.file_size - offset} bytes")


def load_mlp(source: str | Path | bytes, name: str = "", max_bytes: int = MAX_MLP_BYTES) -> Mlp:
    """An MLP from an ``.npz`` file (a path or its bytes), checked (:func:`check_npz` first, then every
    array); a bad file is one :class:`MlpError` line."""
    label = name or (str(source) if not isinstance(source, bytes) else "mlp")
    try:
        raw = io.BytesIO(source) if isinstance(source, bytes) else source
        check_npz(raw, label, max_bytes)
        if isinstance(raw, io.BytesIO):
            raw.seek(0)
        with np.load(raw, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise MlpError(f"{label}: no such file") from None
    except MlpError:
        raise
    except NPZ_ERRORS as exc:
        raise MlpError(f"{label}: not an .npz file of MLP weights ({type(exc).__name__}: {exc})") from None
    fmt = arrays.pop("format", None)
    if fmt is None or fmt.shape != () or str(fmt) != MLP_FORMAT:
        raise MlpError(f"{label}: not a gin-arena MLP file (its 'format' array must be '{MLP_FORMAT}')")
    act = arrays.pop("activation", np.array("relu"))
    n = sum(1 for k in arrays if k.startswith("w"))
    expected = {f"{p}{i}" for i in range(n) for p in "wb"}
    if set(arrays) != expected:
        extra = sorted(set(arrays) ^ expected)
        raise MlpError(f"{label}: arrays must be w0..w{n - 1} and b0..b{n - 1}; wrong or missing: {', '.join(extra)}")
    weights = tuple(arrays[f"w{i}"] for i in range(n))
    biases = tuple(arrays[f"b{i}"] for i in range(n))
    check_layers(weights, biases, str(act), label)
    return Mlp(weights, biases, str(act))


def load_policy_mlp(source: str | Path | bytes, name: str = "", max_bytes: int = MAX_MLP_BYTES) -> Mlp:
    """:func:`load_mlp`, and one :class:`MlpError` line unless the MLP maps the observation to the action
    ids (a policy's shape)."""
    from arena.engine.actions import NUM_ACTIONS, OBS_SIZE

    mlp = load_mlp(source, name, max_bytes)
    if mlp.obs_size != OBS_SIZE or mlp.num_actions != NUM_ACTIONS:
        raise MlpError(
            f"{name or 'mlp'}: the MLP maps {mlp.obs_size} inputs to {mlp.num_actions} outputs; a policy maps "
            f"the observation ({OBS_SIZE}) to the action ids ({NUM_ACTIONS})"
        )
    return mlp


def random_mlp(obs_size: int, num_actions: int, hidden: tuple[int, ...] = (256, 256), seed: int = 0) -> Mlp:
    """An untrained MLP with He-scaled random weights (benchmarks, tests, a training start)."""
    rng = np.random.default_rng(seed)
    sizes = (obs_size, *hidden, num_actions)
    weights = tuple(
        (rng.standard_normal((a, b)) * math.sqrt(2.0 / a)).astype(np.float32) for a, b in zip(sizes, sizes[1:])
    )
    biases = tuple((rng.standard_normal(b) * 0.01).astype(np.float32) for b in sizes[1:])
    return Mlp(weights, biases)


@kernel
def mlp_logits(flat, widths, activation, x, work, out):
    """Write the logits of observation ``x`` (float32) into ``out``; ``work`` holds 2 * the widest layer.

    ``flat``/``widths``/``activation`` are :meth:`Mlp.packed`.  Weights are
    ``[in, out]`` row-major, so each input adds a contiguous row (which the
    compiler vectorises) and a zero input is skipped.
    """
    n_layers = widths.shape[0] - 1
    half = work.shape[0] // 2
    off = 0
    for layer in range(n_layers):
        n_in = widths[layer]
        n_out = widths[layer + 1]
        b_off = off + n_in * n_out
        if layer == n_layers - 1:
            y = out
        elif layer % 2 == 0:
            y = work[:half]
        else:
            y = work[half:]
        for j in range(n_out):
            y[j] = flat[b_off + j]
        for i in range(n_in):
            if layer == 0:
                xi = x[i]
            elif layer % 2 == 1:
                xi = work[i]
            else:
                xi = work[half + i]
            if xi != 0.0:
                w = flat[off + i * n_out : off + (i + 1) * n_out]  # input i's row: a vectorised axpy
                yv = y[:n_out]
                for j in range(n_out):
                    yv[j] += xi * w[j]
        if layer < n_layers - 1:
            if activation == 0:
                for j in range(n_out):
                    if y[j] < 0.0:
                        y[j] = 0.0
            else:
                for j in range(n_out):
                    y[j] = math.tanh(y[j])
        off = b_off + n_out
    return 0


@kernel
def outranks(x, y) -> bool:
    """Whether logit ``x`` beats ``y``: the larger wins, and a NaN ranks below every number.

    A diverging network gives NaN logits; the compiled MLP and the ONNX runtime (numpy's
    argmax picks the first NaN) must still choose the same action, so both follow this rule.
    """
    return x > y or (y != y and x == x)


@kernel
def masked_argmax(logits, mask):
    """The legal action (``mask[a] != 0``) with the largest logit (:func:`outranks`), the first
    on a tie; -1 if none is legal."""
    best = -1
    for a in range(mask.shape[0]):
        if mask[a] != 0 and (best < 0 or outranks(logits[a], logits[best])):
            best = a
    return best


def masked_argmax_rows(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """:func:`masked_argmax` of every row, in numpy: the ONNX policies' choice."""
    valid = mask & ~np.isnan(logits)  # legal, and a number
    key = np.where(valid, logits, -np.inf)
    best = key.argmax(axis=1)
    rows = np.arange(len(best))
    # A row whose best is -inf: its first legal -inf (which outranks NaN), else its first legal action.
    fallback = np.where(valid.any(axis=1), valid.argmax(axis=1), mask.argmax(axis=1))
    return np.where(key[rows, best] == -np.inf, fallback, best)
