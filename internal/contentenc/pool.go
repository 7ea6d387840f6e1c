package contentenc

// PoolBlocks is how many blocks a pooled buffer holds: a 1 MiB request (the
// largest FUSE read or write) touches 256 blocks when aligned and 257 when
// not.
const PoolBlocks = 1<<20/DefaultBS + 1

// GetPBuf returns a plaintext buffer from the pool: length 0, capacity
// PoolBlocks·DefaultBS (enough for PoolBlocks plaintext blocks). Return it with
// PutPBuf when done. The pointer form lets Put avoid an allocation.
func (ce *ContentEnc) GetPBuf() *[]byte {
	return ce.pbufs.Get().(*[]byte)
}

// PutPBuf returns a buffer obtained from GetPBuf. The caller must not use it
// afterwards. Buffers whose capacity shrank below that are dropped.
// The contents are not wiped: plaintext buffers only ever hold data the
// mount shows anyway.
func (ce *ContentEnc) PutPBuf(b *[]byte) {
	if b == nil || cap(*b) < ce.pbufCap {
		return
	}
	*b = (*b)[:0]
	ce.pbufs.Put(b)
}

// GetCBuf returns a ciphertext buffer from the pool: length 0, capacity
// HeaderLen + PoolBlocks·CipherBS() (a header plus PoolBlocks full ciphertext blocks). Return it
// with PutCBuf.
func (ce *ContentEnc) GetCBuf() *[]byte {
	return ce.cbufs.Get().(*[]byte)
}

// PutCBuf returns a buffer obtained from GetCBuf; see PutPBuf.
func (ce *ContentEnc) PutCBuf(b *[]byte) {
	if b == nil || cap(*b) < ce.cbufCap {
		return
	}
	*b = (*b)[:0]
	ce.cbufs.Put(b)
}
