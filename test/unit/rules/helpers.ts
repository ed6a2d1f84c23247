import { expect } from 'vitest';
import { ProtocolError, type ErrorCode } from '../../../src/rules/errors.js';

/** Asserts that `fn` throws a ProtocolError with `code` whose description contains every fragment. */
export function expectProtocolError(fn: () => unknown, code: ErrorCode, ...fragments: string[]): ProtocolError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  return check(caught, code, fragments);
}

/** Async variant of expectProtocolError. */
export async function expectRejection(
  p: Promise<unknown>,
  code: ErrorCode,
  ...fragments: string[]
): Promise<ProtocolError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  return check(caught, code, fragments);
}

function check(caught: unknown, code: ErrorCode, fragments: string[]): ProtocolError {
  expect(caught, 'expected a ProtocolError to be thrown').toBeInstanceOf(ProtocolError);
  const err = caught as ProtocolError;
  expect(err.error).toBe(code);
  expect(err.status).toBe(400);
  for (const f of fragments) expect(err.description).toContain(f);
  return err;
}
