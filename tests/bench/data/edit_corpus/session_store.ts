import { EventEmitter } from "events";
import type { Logger } from "./logger";

export type SessionId = string;

export interface SessionRecord {
  id: SessionId;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  data: Record<string, unknown>;
}

export interface StoreOptions {
  ttlMs: number;
  maxSessions: number;
  sweepIntervalMs?: number;
  logger?: Logger;
}

const DEFAULT_OPTIONS: StoreOptions = {
  ttlMs: 30 * 60 * 1000,
  maxSessions: 10_000,
  sweepIntervalMs: 60 * 1000,
};

export class SessionExpiredError extends Error {
  constructor(public readonly id: SessionId) {
    super(`session ${id} has expired`);
    this.name = "SessionExpiredError";
  }
}

export class SessionStore extends EventEmitter {
  private readonly sessions = new Map<SessionId, SessionRecord>();
  private readonly options: StoreOptions;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(options: Partial<StoreOptions> = {}) {
    super();
    this.options = { ...DEFAULT_OPTIONS, ...options };
    if (this.options.sweepIntervalMs && this.options.sweepIntervalMs > 0) {
      this.timer = setInterval(() => this.sweep(), this.options.sweepIntervalMs);
      this.timer.unref?.();
    }
  }

  get size(): number {
    return this.sessions.size;
  }

  create(userId: string, data: Record<string, unknown> = {}): SessionRecord {
    if (this.sessions.size >= this.options.maxSessions) {
      this.evictOldest();
    }
    const now = Date.now();
    const record: SessionRecord = {
      id: this.newId(),
      userId,
      createdAt: now,
      lastSeenAt: now,
      data,
    };
    this.sessions.set(record.id, record);
    this.emit("created", record);
    this.options.logger?.debug(`created session ${record.id} for ${userId}`);
    return record;
  }

  get(id: SessionId): SessionRecord {
    const record = this.sessions.get(id);
    if (!record) {
      throw new Error(`unknown session '${id}'`);
    }
    if (this.isExpired(record)) {
      this.sessions.delete(id);
      this.emit("expired", record);
      throw new SessionExpiredError(id);
    }
    record.lastSeenAt = Date.now();
    return record;
  }

  update(id: SessionId, patch: Record<string, unknown>): SessionRecord {
    const record = this.get(id);
    record.data = { ...record.data, ...patch };
    this.emit("updated", record);
    return record;
  }

  destroy(id: SessionId): boolean {
    const record = this.sessions.get(id);
    if (!record) {
      return false;
    }
    this.sessions.delete(id);
    this.emit("destroyed", record);
    return true;
  }

  sweep(): number {
    let removed = 0;
    for (const [id, record] of this.sessions) {
      if (this.isExpired(record)) {
        this.sessions.delete(id);
        this.emit("expired", record);
        removed += 1;
      }
    }
    if (removed > 0) {
      this.options.logger?.info(`swept ${removed} expired session(s)`);
    }
    return removed;
  }

  close(): void {
    if (this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    this.sessions.clear();
    this.removeAllListeners();
  }

  private isExpired(record: SessionRecord): boolean {
    return Date.now() - record.lastSeenAt > this.options.ttlMs;
  }

  private evictOldest(): void {
    let oldest: SessionRecord | undefined;
    for (const record of this.sessions.values()) {
      if (!oldest || record.lastSeenAt < oldest.lastSeenAt) {
        oldest = record;
      }
    }
    if (oldest) {
      this.sessions.delete(oldest.id);
      this.emit("evicted", oldest);
    }
  }

  private newId(): SessionId {
    const bytes = new Uint8Array(16);
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = Math.floor(Math.random() * 256);
    }
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
}

export function formatAge(ms: number): string {
  if (ms < 1000) {
    return `${ms} ms`;
  }
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) {
    return `${seconds} s`;
  }
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}
