import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Store } from '../store/types.js';
import { TRACER_NAME } from './tracing.js';

/** The store's operations that get a span (everything but `ping` and `close`). */
const OPERATIONS = new Set<string>([
  'get',
  'getMany',
  'set',
  'setIfAbsent',
  'setIfAbsentWith',
  'setPermanentIfAbsent',
  'replacePermanent',
  'consume',
  'markOnce',
  'delete',
  'shorten',
  'takeFree',
  'attempt',
  'addToSet',
  'members',
  'addToList',
  'listed',
  'schedule',
  'claimDue',
  'unschedule',
  'scheduled',
]);

/** The words of the service's keys after their identifier (src/issuance/offers.ts, src/status, ...): a record's kind, never a value. */
const KEY_WORDS = new Set([
  'offer',
  'status',
  'outcome',
  'pin-attempts',
  'redemption',
  'claims',
  'consumed',
  'claimed',
  'login',
  'current',
  'serial',
  'changed',
  'count',
  'list',
  'next',
  'version',
  'i',
  'r',
  'v',
  'due',
  'code',
]);

/**
 * A key's family, for a span's name: the key's first word (`wallet`, `step`, `hint`, `oidc`, ...), for
 * oidc-provider's records the namespace and model, and the kind words after the identifier. Identifiers
 * (every hash-tagged `{...}` part, and any segment that is not one of the known words) never appear:
 * `wallet:{id}:offer` is `wallet offer`, `oidc:v2:Grant:{id}` is `oidc v2 Grant`.
 */
export function keyFamily(key: string): string {
  const parts = key.replace(/\{[^}]*\}/g, '').split(':');
  const kept = [parts[0]];
  let i = 1;
  if (parts[0] === 'oidc') {
    for (; i < 3 && i < parts.length && /^[A-Za-z0-9.-]{1,40}$/.test(parts[i]); i++) kept.push(parts[i]);
  }
  for (; i < parts.length; i++) if (KEY_WORDS.has(parts[i])) kept.push(parts[i]);
  return kept.filter(Boolean).join(' ') || 'unknown';
}

function familyOf(op: string, args: unknown[]): string {
  const first = args[0];
  if (op === 'getMany' || op === 'delete') {
    const keys = (op === 'getMany' ? (first as string[]) : (args as string[])) ?? [];
    return [...new Set(keys.map(keyFamily))].join(',');
  }
  return typeof first === 'string' ? keyFamily(first) : 'unknown';
}

/**
 * The store with a CLIENT span per operation (`store get wallet offer`), as a child of the request or job
 * being served; an operation outside any span (a background poll) gets none. Attributes: the operation,
 * the key's family and the store's kind, never a key or a value. Wrapped once, where the service takes
 * its store (src/app.ts), and only when tracing is on.
 */
export function tracedStore(store: Store): Store {
  const tracer = trace.getTracer(TRACER_NAME);
  const system = store.kind === 'redis' ? 'redis' : 'memory';
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      let fn = wrapped.get(prop);
      if (fn) return fn;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      // bound to the store itself: RedisStore's private fields are not reachable through a proxy
      fn = !OPERATIONS.has(String(prop))
        ? method.bind(target)
        : (...args: unknown[]) => {
            const parent = context.active();
            if (!trace.getSpan(parent)) return method.apply(target, args);
            const family = familyOf(String(prop), args);
            const span = tracer.startSpan(
              `store ${String(prop)} ${family}`,
              {
                kind: SpanKind.CLIENT,
                attributes: {
                  'db.system.name': system,
                  'db.operation.name': String(prop),
                  'vc.store.key_family': family,
                },
              },
              parent,
            );
            return context
              .with(trace.setSpan(parent, span), () => method.apply(target, args))
              .then(
                (result) => {
                  span.end();
                  return result;
                },
                (err: unknown) => {
                  span.setStatus({ code: SpanStatusCode.ERROR });
                  span.setAttribute('error.type', (err as Error)?.name ?? 'Error');
                  span.end();
                  throw err;
                },
              );
          };
      wrapped.set(prop, fn);
      return fn;
    },
  });
}
