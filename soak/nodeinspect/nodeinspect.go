// Package nodeinspect reads a Node target's live heap over its V8
// inspector (node --inspect=127.0.0.1:PORT): the Chrome DevTools Protocol
// on a WebSocket, whose URL the inspector lists at /json/list. A reading
// forces a full collection (HeapProfiler.collectGarbage) and then reads
// the bytes that survived it: the V8 heap's (Runtime.getHeapUsage's
// usedSize) and the memory its objects hold outside it (the backing
// stores of Buffers and ArrayBuffers: process.memoryUsage().external).
//
// The inspector grants whoever connects the execution of any code in the
// target; this package evaluates one fixed expression and nothing else,
// and refuses any address but loopback.
package nodeinspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"
)

// CheckAddr checks that addr is HOST:PORT on loopback (127.0.0.0/8, ::1
// or localhost): the inspector grants code execution and must never be
// reached on another host.
func CheckAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("want HOST:PORT of a Node inspector, e.g. 127.0.0.1:9229")
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: the inspector grants code execution in the target, so only 127.0.0.1, ::1 or localhost are taken", host)
	}
	return nil
}

// Client is one session with a Node inspector.
type Client struct {
	addr string

	mu sync.Mutex // guards below: one call at a time
	ws *websocket.Conn
	id int
}

// Dial checks that addr's inspector is Node's (/json/version), finds its
// target's WebSocket (/json/list) and connects to it.
func Dial(ctx context.Context, addr string) (*Client, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	var ver struct {
		Browser string `json:"Browser"`
	}
	if err := getJSON(ctx, addr, "/json/version", &ver); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(ver.Browser, "node.js/") {
		return nil, fmt.Errorf("%s: the inspector says it is %q, not node.js", addr, ver.Browser)
	}
	var list []struct {
		Type string `json:"type"`
		WS   string `json:"webSocketDebuggerUrl"`
	}
	if err := getJSON(ctx, addr, "/json/list", &list); err != nil {
		return nil, err
	}
	ws := ""
	for _, t := range list {
		if t.Type == "node" && t.WS != "" {
			ws = t.WS
			break
		}
	}
	if ws == "" {
		return nil, fmt.Errorf("%s/json/list: no node target with a webSocketDebuggerUrl (is another debugger attached?)", addr)
	}
	if !strings.HasPrefix(ws, "ws://"+addr+"/") {
		// The inspector names its own address: keep to the one checked.
		i := strings.Index(strings.TrimPrefix(ws, "ws://"), "/")
		if i < 0 {
			return nil, fmt.Errorf("%s/json/list: webSocketDebuggerUrl %q is not a ws:// URL", addr, ws)
		}
		ws = "ws://" + addr + strings.TrimPrefix(ws, "ws://")[i:]
	}
	cfg, err := websocket.NewConfig(ws, "http://"+addr+"/")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ws, err)
	}
	conn, err := cfg.DialContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to the inspector at %s: %w", ws, err)
	}
	conn.MaxPayloadBytes = 1 << 20
	return &Client{addr: addr, ws: conn}, nil
}

// getJSON reads the inspector's JSON at path of addr (a checked
// loopback host:port).
func getJSON(ctx context.Context, addr, path string, v any) error {
	url := "http://" + addr + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no Node inspector at %s: %w", addr+path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s (not a Node inspector?)", url, resp.Status)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w (not a Node inspector?)", url, err)
	}
	return nil
}

// Close ends the session; the target's inspector stays open.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.Close()
}

// Heap is one reading, in bytes, after a full collection.
type Heap struct {
	Used     float64 // the V8 heap's objects (Runtime.getHeapUsage usedSize)
	External float64 // held outside the V8 heap by its objects (Buffers' memory)
}

// Live is the bytes the target keeps: its heap's and its external memory.
func (h Heap) Live() float64 { return h.Used + h.External }

// externalExpr is the one expression evaluated in the target.
const externalExpr = "process.memoryUsage().external"

// LiveHeap forces a full collection in the target and reads what survived
// it.
func (c *Client) LiveHeap(ctx context.Context) (Heap, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.call(ctx, "HeapProfiler.collectGarbage", nil, nil); err != nil {
		return Heap{}, err
	}
	var usage struct {
		UsedSize float64 `json:"usedSize"`
	}
	if err := c.call(ctx, "Runtime.getHeapUsage", nil, &usage); err != nil {
		return Heap{}, err
	}
	var ev struct {
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	params := map[string]any{"expression": externalExpr, "returnByValue": true, "silent": true}
	if err := c.call(ctx, "Runtime.evaluate", params, &ev); err != nil {
		return Heap{}, err
	}
	var ext float64
	if ev.Exception != nil || ev.Result.Type != "number" || json.Unmarshal(ev.Result.Value, &ext) != nil {
		return Heap{}, fmt.Errorf("inspector at %s: %s gave %s %s (not Node?)", c.addr, externalExpr, ev.Result.Type, ev.Result.Value)
	}
	return Heap{Used: usage.UsedSize, External: ext}, nil
}

// call sends method with params and decodes its result into out (nil:
// dropped), skipping the events the inspector sends meanwhile.
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(time.Minute)
	}
	if err := c.ws.SetDeadline(deadline); err != nil {
		return err
	}
	c.id++
	req := struct {
		ID     int    `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{c.id, method, params}
	if err := websocket.JSON.Send(c.ws, req); err != nil {
		return fmt.Errorf("inspector at %s: %s: %w", c.addr, method, err)
	}
	for {
		var resp struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := websocket.JSON.Receive(c.ws, &resp); err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the inspector closed the session")
			}
			return fmt.Errorf("inspector at %s: %s: %w", c.addr, method, err)
		}
		if resp.ID != c.id {
			continue // an event, or a late answer
		}
		if resp.Error != nil {
			return fmt.Errorf("inspector at %s: %s: %s (%d)", c.addr, method, resp.Error.Message, resp.Error.Code)
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(resp.Result, out)
	}
}
