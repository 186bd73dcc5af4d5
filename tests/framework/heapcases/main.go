// Writes tests/framework/heapcases/cases.json: lists of (total, randomizer) and the order in
// which Go's container/heap pops them with kube-scheduler v1.37's nodeScoreHeap.Less
// (framework/sorted_nodes.go). tests/framework/test_sortednodes.py checks eventsched's port
// against them. Run from this directory: go run main.go > cases.json
package main

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"math/rand"
)

type node struct {
	index      int
	total      int64
	randomizer int
}

type nodeHeap []node

func (h nodeHeap) Len() int { return len(h) }
func (h nodeHeap) Less(i, j int) bool {
	return h[i].total > h[j].total || (h[i].total == h[j].total && h[i].randomizer > h[j].randomizer)
}
func (h nodeHeap) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *nodeHeap) Push(x interface{}) { *h = append(*h, x.(node)) }
func (h *nodeHeap) Pop() interface{} {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}

type heapCase struct {
	Totals      []int64 `json:"totals"`
	Randomizers []int   `json:"randomizers"`
	Order       []int   `json:"order"`
}

func main() {
	r := rand.New(rand.NewSource(137))
	var cases []heapCase
	for t := 0; t < 200; t++ {
		n := 1 + r.Intn(14)
		span := 1 + r.Intn(4)
		withRandomizers := t%3 == 0
		var h nodeHeap
		c := heapCase{Totals: []int64{}, Randomizers: []int{}, Order: []int{}}
		for i := 0; i < n; i++ {
			total := int64(r.Intn(span) * 7)
			randomizer := 0
			if withRandomizers && r.Intn(2) == 0 {
				randomizer = r.Intn(5)
			}
			h = append(h, node{i, total, randomizer})
			c.Totals = append(c.Totals, total)
			c.Randomizers = append(c.Randomizers, randomizer)
		}
		heap.Init(&h)
		for h.Len() > 0 {
			c.Order = append(c.Order, heap.Pop(&h).(node).index)
		}
		cases = append(cases, c)
	}
	b, err := json.Marshal(cases)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}
