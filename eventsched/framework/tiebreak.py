"""The tie-break draw: `numpy.random.default_rng(seed).integers(n)`, in plain Python.

Every attempt that ends in a tie draws the winner from the attempt's recorded seed
(`selection.select_host`), and replay draws again from the same seed, so the draw
is part of the log's meaning: logs written with numpy's generator must replay to
the same node. This module computes exactly what numpy computes for that call, for
every seed in [0, 2**128) and every count in [1, 2**32]: the seed is hashed into a
4-word pool (`SeedSequence`), 8 words are drawn from the pool, they seed a PCG64
(XSL-RR, 128-bit LCG), and the number is drawn by Lemire's method from 32-bit
halves of its 64-bit outputs (`Generator.integers` with a range below 2**32).
tests/framework/test_tiebreak.py checks it against numpy itself.

Why not numpy: building a Generator costs about 30 us in the scheduling process (a
SeedSequence, a bit generator, a lock, an errstate), and `numpy.random` takes about
25 ms to import on the first tie; this takes about 20 us and imports nothing. A seed
or count outside those ranges (none that eventsched writes: seeds are 63-bit) goes
to numpy as before, errors included.
"""

from __future__ import annotations

_M32 = 0xFFFF_FFFF
_M64 = 0xFFFF_FFFF_FFFF_FFFF
_M128 = (1 << 128) - 1

#: SeedSequence's mixing constants (numpy/random/bit_generator.pyx).
_MIX_L = 0xCA01_F9DD
_MIX_R = 0x4973_F715
#: PCG's default 128-bit multiplier.
_PCG_MULT = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645

#: The largest seed the 4-word pool takes without mixing in further words.
SEED_LIMIT = 1 << 128
#: The largest count drawn from with 32-bit words.
COUNT_LIMIT = 1 << 32


def _hash_constants(init: int, mult: int, count: int) -> tuple[tuple[int, int], ...]:
    """The (xor, multiply) constant pairs of `count` successive hashes: SeedSequence's
    running hash constant does not depend on the data, so its sequence is fixed."""
    pairs = []
    h = init
    for _ in range(count):
        following = (h * mult) & _M32
        pairs.append((h, following))
        h = following
    return tuple(pairs)


#: Hashing the entropy into the pool: 4 words in, then 12 cross-mixes.
_POOL_HASHES = _hash_constants(0x43B0_D7E5, 0x931E_8875, 16)
_CROSS_MIXES = tuple(
    zip(
        ((src, dst) for src in range(4) for dst in range(4) if src != dst),
        _POOL_HASHES[4:],
        strict=True,
    )
)
#: Drawing the 8 state words (4 uint64) from the pool.
_STATE_HASHES = _hash_constants(0x8B51_F9DD, 0x58F3_8DED, 8)


def _pool(seed: int) -> list[int]:
    """SeedSequence(seed).pool for 0 <= seed < 2**128 (its entropy, 32-bit words, padded)."""
    pool = []
    for xor, mult in _POOL_HASHES[:4]:
        word = (((seed & _M32) ^ xor) * mult) & _M32
        pool.append(word ^ (word >> 16))
        seed >>= 32
    for (src, dst), (xor, mult) in _CROSS_MIXES:
        word = ((pool[src] ^ xor) * mult) & _M32
        word ^= word >> 16
        mixed = (_MIX_L * pool[dst] - _MIX_R * word) & _M32
        pool[dst] = mixed ^ (mixed >> 16)
    return pool


def _pcg_seed(pool: list[int]) -> tuple[int, int]:
    """PCG64's (state, increment) seeded from the pool's 4 uint64 words: the first two
    are the initial state (high, low), the last two the stream."""
    words = []
    for i, (xor, mult) in enumerate(_STATE_HASHES):
        word = ((pool[i & 3] ^ xor) * mult) & _M32
        words.append(word ^ (word >> 16))
    initial = words[0] << 64 | words[1] << 96 | words[2] | words[3] << 32
    stream = words[4] << 64 | words[5] << 96 | words[6] | words[7] << 32
    increment = (stream << 1 | 1) & _M128
    # pcg_setseq_128_srandom_r: state 0, step, add the initial state, step.
    return ((increment + initial) * _PCG_MULT + increment) & _M128, increment


def draw(seed: int, count: int) -> int:
    """`int(numpy.random.default_rng(seed).integers(count))`: 0 <= result < count."""
    if not (0 <= seed < SEED_LIMIT and 1 <= count <= COUNT_LIMIT):
        return _numpy_draw(seed, count)
    if count == 1:
        return 0
    state, increment = _pcg_seed(_pool(seed))
    spare = -1  # the high half of the last 64-bit output, drawn next
    while True:
        if spare >= 0:
            word, spare = spare, -1
        else:
            state = (state * _PCG_MULT + increment) & _M128
            folded = (state >> 64) ^ (state & _M64)
            rotation = state >> 122
            output = ((folded >> rotation) | (folded << (64 - rotation))) & _M64
            word, spare = output & _M32, output >> 32
        scaled = word * count
        low = scaled & _M32
        # Lemire's rejection: only a low part below (2**32 - count) % count is biased.
        if low >= count or low >= (COUNT_LIMIT - count) % count:
            return scaled >> 32


def _numpy_draw(seed: int, count: int) -> int:
    import numpy as np

    return int(np.random.default_rng(seed).integers(count))
