package runner

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/soakd/soakd/soak/nodeinspect"
)

// nodeReadTimeout bounds one reading: a forced collection of the target's
// heap and two calls.
const nodeReadTimeout = 30 * time.Second

// nodeHeap reads a Node target's live heap over the inspector the user
// named (Options.NodeInspect): a forced full collection, then the V8
// heap's used bytes and the external memory its objects hold (Buffers),
// at the same moments a Go target's heap profile is read.
type nodeHeap struct{ c *nodeinspect.Client }

// LiveHeap is heapReader's: no allocation sites.
func (n nodeHeap) LiveHeap(ctx context.Context) (float64, map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, nodeReadTimeout)
	defer cancel()
	h, err := n.c.LiveHeap(ctx)
	return h.Live(), nil, err
}

// openNodeHeap connects to the Node inspector Options.NodeInspect names:
// nil, with one log line saying why, when the target's root is not Node
// or no Node inspector answers there (its endpoints then stay not judged).
func (r *runner) openNodeHeap(ctx context.Context) *liveHeap {
	addr := r.o.NodeInspect
	if r.collector != "Node" {
		r.o.Log.Warn("the target's root process is not Node: its inspector is not read, and its memory's split between the endpoints is judged as before",
			zap.String("node_inspect", addr), zap.String("collector", r.collector))
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, nodeReadTimeout)
	defer cancel()
	c, err := nodeinspect.Dial(dctx, addr)
	if err == nil {
		_, err = c.LiveHeap(dctx)
		if err != nil {
			c.Close()
		}
	}
	if err != nil {
		r.o.Log.Warn("the Node inspector cannot be read: its memory's split between the endpoints is not judged", zap.String("node_inspect", addr), zap.Error(err))
		return nil
	}
	r.o.Log.Info("reading the Node target's live heap over its inspector at each block's end (a forced collection each)", zap.String("node_inspect", addr))
	return &liveHeap{probe: nodeHeap{c}, close: func() { c.Close() }, eng: r.eng, since: r.start, now: r.o.Now, log: r.o.Log}
}
