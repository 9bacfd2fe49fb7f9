package actors

import "testing"

// TestSendMovesForward holds the lifecycle's table to its promise: a send
// only moves forward, every phase but the last has a way on, and moveTo
// refuses a move the table does not hold.
func TestSendMovesForward(t *testing.T) {
	for from, tos := range sendMoves {
		if len(tos) == 0 && sendPhase(from) != phaseDrained {
			t.Errorf("phase %d has no way on", from)
		}
		for _, to := range tos {
			if to <= sendPhase(from) {
				t.Errorf("move %d -> %d goes back", from, to)
			}
		}
	}
	a := &sendActor{}
	if a.moveTo(phaseSettled) || a.phase != phaseCollecting {
		t.Fatalf("moveTo took a move the table does not hold: phase %d", a.phase)
	}
	for _, to := range []sendPhase{phaseHolding, phaseSettled, phaseDrained} {
		if !a.moveTo(to) || a.phase != to {
			t.Fatalf("moveTo(%d) refused, phase %d", to, a.phase)
		}
	}
}
