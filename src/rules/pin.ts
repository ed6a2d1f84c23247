import { invalidRequest } from './errors.js';

/**
 * PIN rules of issuance (spec Authentication 7; D8). Returns the PIN, or undefined when the hint has
 * none. A violation is invalid_request (D4). The PIN value itself never appears in a description.
 */
export function checkPinRule(pinCode: unknown, pinCodeLength: number | undefined): string | undefined {
  // D8: PinCode stays optional
  if (pinCode === undefined) return undefined;
  // spec Authentication 7: "PinCode may be present only when pinCodeLength is defined"
  if (pinCodeLength === undefined) {
    throw invalidRequest('PinCode is not allowed: credential type has no pinCodeLength');
  }
  // spec id_token_hint: PinCode is an optional *string* of digits
  if (typeof pinCode === 'number') {
    throw invalidRequest('PinCode must be a string of digits, not a JSON number (leading zeros would be lost)');
  }
  if (typeof pinCode !== 'string') throw invalidRequest('PinCode must be a string of digits');
  // spec Authentication 7: "it must be numeric" (ASCII digits only)
  if (!/^[0-9]*$/.test(pinCode)) throw invalidRequest('PinCode must contain only the digits 0-9');
  // spec Authentication 7: "its length must equal pinCodeLength"
  if (pinCode.length !== pinCodeLength) {
    throw invalidRequest(`PinCode must be exactly ${pinCodeLength} digits long (pinCodeLength of the credential type)`);
  }
  return pinCode;
}
