//go:build stickyproof_cooperative

// Built only against sarama releases that have the cooperative-sticky strategy and the rebalance
// protocol declarations (stickyproof.peers.sarama adds the build tag when the module has them).

package main

import "github.com/IBM/sarama"

func init() {
	strategies["cooperative-sticky"] = sarama.NewBalanceStrategyCooperativeSticky
	protocolsOf = func(s sarama.BalanceStrategy) []string {
		if declared, ok := s.(sarama.RebalanceProtocolBalanceStrategy); ok {
			var out []string
			for _, p := range declared.SupportedProtocols() {
				out = append(out, p.String())
			}
			return out
		}
		return []string{"eager"}
	}
}
