import { describe, it, expect } from 'vitest';
import { checkPinRule } from '../../../src/rules/pin.js';
import { expectProtocolError } from './helpers.js';

describe('spec: Authentication 7, PIN protection of issuance (D8)', () => {
  it('returns undefined when the hint has no PinCode, with or without pinCodeLength (D8: PinCode stays optional)', () => {
    expect(checkPinRule(undefined, 4)).toBeUndefined();
    expect(checkPinRule(undefined, undefined)).toBeUndefined();
  });

  it('returns a PIN of digits with exactly pinCodeLength digits (spec: Authentication 7)', () => {
    expect(checkPinRule('0123', 4)).toBe('0123');
    expect(checkPinRule('123456', 6)).toBe('123456');
  });

  it('refuses a PinCode when the credential type has no pinCodeLength (spec: Authentication 7, "only when pinCodeLength is defined")', () => {
    expectProtocolError(
      () => checkPinRule('1234', undefined),
      'invalid_request',
      'PinCode is not allowed: credential type has no pinCodeLength',
    );
  });

  it('refuses a PinCode sent as a JSON number, saying so (spec: id_token_hint, PinCode "string of digits")', () => {
    expectProtocolError(() => checkPinRule(1234, 4), 'invalid_request', 'PinCode', 'JSON number');
  });

  it.each([null, true, ['1234'], { pin: '1234' }])(
    'refuses a non-string PinCode %j (spec: Authentication 7)',
    (pin) => {
      expectProtocolError(() => checkPinRule(pin, 4), 'invalid_request', 'PinCode must be a string of digits');
    },
  );

  it.each(['12a4', '12 4', '-123', '+123', '1.23', '١٢٣٤', '１２３４'])(
    'refuses non-ASCII-digit PinCode %j (spec: Authentication 7, "must be numeric")',
    (pin) => {
      const e = expectProtocolError(
        () => checkPinRule(pin, 4),
        'invalid_request',
        'PinCode must contain only the digits 0-9',
      );
      expect(e.description).not.toContain(pin);
    },
  );

  it.each(['123', '12345', ''])(
    'refuses PinCode of the wrong length %j, naming the expected length but never the value (spec: Authentication 7)',
    (pin) => {
      const e = expectProtocolError(() => checkPinRule(pin, 4), 'invalid_request', 'PinCode must be exactly 4 digits');
      if (pin) expect(e.description).not.toContain(pin);
    },
  );
});
