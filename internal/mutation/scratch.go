package mutation

import (
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// scratch is what one merge works with: structured-merge-diff's value
// allocator and the walkers bound to it. It is pooled, so that the
// allocator's free lists and the walkers' buffers serve the next merge
// instead of being made again for every apply configuration.
type scratch struct {
	a      value.Allocator
	copier *copier
	viewer *viewer
	atoms  *atomScan
}

var scratches = sync.Pool{New: func() any {
	a := value.NewFreelistAllocator()
	return &scratch{a: a, copier: newCopier(a), viewer: newViewer(a), atoms: newAtomScan(a)}
}}

// release empties the walkers, dropping what they referred to, and puts
// sc back in the pool.
func (sc *scratch) release() {
	clear(sc.copier.maps[:cap(sc.copier.maps)])
	sc.copier.maps = sc.copier.maps[:0]
	sc.copier.share = false
	clear(sc.viewer.entries[:cap(sc.viewer.entries)])
	sc.viewer.entries = sc.viewer.entries[:0]
	clear(sc.viewer.frames[:cap(sc.viewer.frames)])
	sc.viewer.frames = sc.viewer.frames[:0]
	sc.atoms.s, sc.atoms.m = nil, nil
	scratches.Put(sc)
}
