package ratelimit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrLimited is returned by Wait when the context ends before a token is free.
var ErrLimited = errors.New("ratelimit: rate limited")

// Bucket is a token bucket: it holds up to Burst tokens and refills Rate tokens per second.
type Bucket struct {
	mu       sync.Mutex
	rate     float64
	burst    float64
	tokens   float64
	lastFill time.Time
	now      func() time.Time
}

// New returns a full bucket.
func New(rate float64, burst int) *Bucket {
	if rate <= 0 {
		panic("ratelimit: rate must be positive")
	}
	if burst < 1 {
		burst = 1
	}
	b := &Bucket{
		rate:  rate,
		burst: float64(burst),
		now:   time.Now,
	}
	b.tokens = b.burst
	b.lastFill = b.now()
	return b
}

func (b *Bucket) refill() {
	now := b.now()
	elapsed := now.Sub(b.lastFill).Seconds()
	if elapsed <= 0 {
		return
	}
	b.tokens += elapsed * b.rate
	if b.tokens > b.burst {
		b.tokens = b.burst
	}
	b.lastFill = now
}

// Allow takes one token if one is available.
func (b *Bucket) Allow() bool {
	return b.AllowN(1)
}

// AllowN takes n tokens if that many are available.
func (b *Bucket) AllowN(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens < float64(n) {
		return false
	}
	b.tokens -= float64(n)
	return true
}

// Reserve takes one token now and says how long to wait before using it.
func (b *Bucket) Reserve() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	missing := -b.tokens
	return time.Duration(missing / b.rate * float64(time.Second))
}

// Wait blocks until a token is free or ctx is done.
func (b *Bucket) Wait(ctx context.Context) error {
	delay := b.Reserve()
	if delay == 0 {
		return nil
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		b.tokens++
		b.mu.Unlock()
		return ErrLimited
	}
}

// Tokens reports the tokens available now.
func (b *Bucket) Tokens() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	return b.tokens
}

// Limiter keeps one bucket per key, created on first use.
type Limiter struct {
	mu      sync.Mutex
	rate    float64
	burst   int
	buckets map[string]*Bucket
}

// NewLimiter returns a Limiter whose buckets all share rate and burst.
func NewLimiter(rate float64, burst int) *Limiter {
	return &Limiter{rate: rate, burst: burst, buckets: make(map[string]*Bucket)}
}

// Allow takes a token from key's bucket.
func (l *Limiter) Allow(key string) bool {
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		b = New(l.rate, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	return b.Allow()
}

// Forget drops the buckets that have been full for at least idle.
func (l *Limiter) Forget(idle time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	dropped := 0
	for key, b := range l.buckets {
		b.mu.Lock()
		full := b.tokens >= b.burst && b.now().Sub(b.lastFill) >= idle
		b.mu.Unlock()
		if full {
			delete(l.buckets, key)
			dropped++
		}
	}
	return dropped
}
