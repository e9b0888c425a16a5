package defaulting

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	"k8s.io/apimachinery/pkg/runtime"
)

// Flow schemas match at precedence 1000 unless told otherwise. Priority
// levels lend nothing by default; limited ones get 30 concurrency shares
// (v1beta3 unless the preserve-zero annotation is present, v1 only when the
// field is absent) and queues of 64, hands of 8 and queue lengths of 50.

const (
	defaultMatchingPrecedence int32 = 1000
	defaultConcurrencyShares  int32 = 30
	defaultHandSize           int32 = 8
	defaultQueues             int32 = 64
	defaultQueueLengthLimit   int32 = 50
)

func defaultQueuing(hand, queues, length *int32) {
	if *hand == 0 {
		*hand = defaultHandSize
	}
	if *queues == 0 {
		*queues = defaultQueues
	}
	if *length == 0 {
		*length = defaultQueueLengthLimit
	}
}

func defaultExempt(shares, lendable **int32) {
	if *shares == nil {
		*shares = new(int32(0))
	}
	if *lendable == nil {
		*lendable = new(int32(0))
	}
}

func defaultPrecedence(p *int32) {
	if *p == 0 {
		*p = defaultMatchingPrecedence
	}
}

func registerFlowcontrolV1(s *runtime.Scheme) {
	add(s, func(f *flowcontrolv1.FlowSchema) {
		defaultPrecedence(&f.Spec.MatchingPrecedence)
	}, func(l *flowcontrolv1.FlowSchemaList) []flowcontrolv1.FlowSchema { return l.Items })

	add(s, func(p *flowcontrolv1.PriorityLevelConfiguration) {
		if l := p.Spec.Limited; l != nil {
			if l.NominalConcurrencyShares == nil {
				l.NominalConcurrencyShares = new(defaultConcurrencyShares)
			}
			if l.LendablePercent == nil {
				l.LendablePercent = new(int32(0))
			}
			if q := l.LimitResponse.Queuing; q != nil {
				defaultQueuing(&q.HandSize, &q.Queues, &q.QueueLengthLimit)
			}
		}
		if e := p.Spec.Exempt; e != nil {
			defaultExempt(&e.NominalConcurrencyShares, &e.LendablePercent)
		}
	}, func(l *flowcontrolv1.PriorityLevelConfigurationList) []flowcontrolv1.PriorityLevelConfiguration {
		return l.Items
	})

}

func registerFlowcontrolV1beta1(s *runtime.Scheme) {
	add(s, func(f *flowcontrolv1beta1.FlowSchema) {
		defaultPrecedence(&f.Spec.MatchingPrecedence)
	}, func(l *flowcontrolv1beta1.FlowSchemaList) []flowcontrolv1beta1.FlowSchema { return l.Items })

	add(s, func(p *flowcontrolv1beta1.PriorityLevelConfiguration) {
		if l := p.Spec.Limited; l != nil {
			if l.AssuredConcurrencyShares == 0 {
				l.AssuredConcurrencyShares = defaultConcurrencyShares
			}
			if l.LendablePercent == nil {
				l.LendablePercent = new(int32(0))
			}
			if q := l.LimitResponse.Queuing; q != nil {
				defaultQueuing(&q.HandSize, &q.Queues, &q.QueueLengthLimit)
			}
		}
		if e := p.Spec.Exempt; e != nil {
			defaultExempt(&e.NominalConcurrencyShares, &e.LendablePercent)
		}
	}, func(l *flowcontrolv1beta1.PriorityLevelConfigurationList) []flowcontrolv1beta1.PriorityLevelConfiguration {
		return l.Items
	})

}

func registerFlowcontrolV1beta2(s *runtime.Scheme) {
	add(s, func(f *flowcontrolv1beta2.FlowSchema) {
		defaultPrecedence(&f.Spec.MatchingPrecedence)
	}, func(l *flowcontrolv1beta2.FlowSchemaList) []flowcontrolv1beta2.FlowSchema { return l.Items })

	add(s, func(p *flowcontrolv1beta2.PriorityLevelConfiguration) {
		if l := p.Spec.Limited; l != nil {
			if l.AssuredConcurrencyShares == 0 {
				l.AssuredConcurrencyShares = defaultConcurrencyShares
			}
			if l.LendablePercent == nil {
				l.LendablePercent = new(int32(0))
			}
			if q := l.LimitResponse.Queuing; q != nil {
				defaultQueuing(&q.HandSize, &q.Queues, &q.QueueLengthLimit)
			}
		}
		if e := p.Spec.Exempt; e != nil {
			defaultExempt(&e.NominalConcurrencyShares, &e.LendablePercent)
		}
	}, func(l *flowcontrolv1beta2.PriorityLevelConfigurationList) []flowcontrolv1beta2.PriorityLevelConfiguration {
		return l.Items
	})

}

func registerFlowcontrolV1beta3(s *runtime.Scheme) {
	add(s, func(f *flowcontrolv1beta3.FlowSchema) {
		defaultPrecedence(&f.Spec.MatchingPrecedence)
	}, func(l *flowcontrolv1beta3.FlowSchemaList) []flowcontrolv1beta3.FlowSchema { return l.Items })

	add(s, func(p *flowcontrolv1beta3.PriorityLevelConfiguration) {
		if l := p.Spec.Limited; l != nil {
			if _, keep := p.Annotations[flowcontrolv1beta3.PriorityLevelPreserveZeroConcurrencySharesKey]; !keep && l.NominalConcurrencyShares == 0 {
				l.NominalConcurrencyShares = defaultConcurrencyShares
			}
			if l.LendablePercent == nil {
				l.LendablePercent = new(int32(0))
			}
			if q := l.LimitResponse.Queuing; q != nil {
				defaultQueuing(&q.HandSize, &q.Queues, &q.QueueLengthLimit)
			}
		}
		if e := p.Spec.Exempt; e != nil {
			defaultExempt(&e.NominalConcurrencyShares, &e.LendablePercent)
		}
	}, func(l *flowcontrolv1beta3.PriorityLevelConfigurationList) []flowcontrolv1beta3.PriorityLevelConfiguration {
		return l.Items
	})

}
