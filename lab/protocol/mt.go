package protocol

// mt19937 is the Mersenne Twister used by both CPython's random module and
// NumPy's legacy RandomState, reimplemented so class orders match those
// libraries bit for bit.
type mt19937 struct {
	mt  [624]uint32
	idx int
}

func (m *mt19937) initGenrand(s uint32) {
	m.mt[0] = s
	for i := 1; i < 624; i++ {
		m.mt[i] = 1812433253*(m.mt[i-1]^(m.mt[i-1]>>30)) + uint32(i)
	}
	m.idx = 624
}

// initByArray is CPython's init_by_array (random.seed of an int).
func (m *mt19937) initByArray(key []uint32) {
	m.initGenrand(19650218)
	i, j := 1, 0
	n := 624
	k := max(n, len(key))
	for ; k > 0; k-- {
		m.mt[i] = (m.mt[i] ^ ((m.mt[i-1] ^ (m.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			m.mt[0] = m.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = n - 1; k > 0; k-- {
		m.mt[i] = (m.mt[i] ^ ((m.mt[i-1] ^ (m.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			m.mt[0] = m.mt[n-1]
			i = 1
		}
	}
	m.mt[0] = 0x80000000
	m.idx = 624
}

func (m *mt19937) uint32() uint32 {
	if m.idx >= 624 {
		const upper, lower = 0x80000000, 0x7fffffff
		mag := [2]uint32{0, 0x9908b0df}
		var kk int
		for kk = 0; kk < 624-397; kk++ {
			y := m.mt[kk]&upper | m.mt[kk+1]&lower
			m.mt[kk] = m.mt[kk+397] ^ (y >> 1) ^ mag[y&1]
		}
		for ; kk < 623; kk++ {
			y := m.mt[kk]&upper | m.mt[kk+1]&lower
			m.mt[kk] = m.mt[kk+(397-624)] ^ (y >> 1) ^ mag[y&1]
		}
		y := m.mt[623]&upper | m.mt[0]&lower
		m.mt[623] = m.mt[396] ^ (y >> 1) ^ mag[y&1]
		m.idx = 0
	}
	y := m.mt[m.idx]
	m.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// pythonSeed seeds like CPython's random.seed(s) for an int s: the
// absolute value split into 32-bit words, least significant first.
func pythonSeed(s int64) *mt19937 {
	u := uint64(s)
	if s < 0 {
		u = uint64(-s)
	}
	key := []uint32{uint32(u)}
	if hi := uint32(u >> 32); hi != 0 {
		key = append(key, hi)
	}
	m := &mt19937{}
	m.initByArray(key)
	return m
}

// getrandbits is CPython's random.getrandbits(k) for 0 < k <= 32.
func (m *mt19937) getrandbits(k int) uint32 {
	return m.uint32() >> (32 - k)
}

// randbelow is CPython's Random._randbelow_with_getrandbits(n), n > 0.
func (m *mt19937) randbelow(n int) int {
	k := bitLength(uint32(n))
	r := int(m.getrandbits(k))
	for r >= n {
		r = int(m.getrandbits(k))
	}
	return r
}

func bitLength(n uint32) int {
	b := 0
	for n != 0 {
		b++
		n >>= 1
	}
	return b
}

// numpyInterval is NumPy's legacy random_interval(max): masked rejection
// sampling of 32-bit draws.
func (m *mt19937) numpyInterval(maxv uint32) uint32 {
	if maxv == 0 {
		return 0
	}
	mask := maxv
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	for {
		v := m.uint32() & mask
		if v <= maxv {
			return v
		}
	}
}
