import type { Problem } from '../api.ts';

/** A browser's WebAuthn refusal (cancelled, timed out, no passkey) in words, as a Problem. */
export function passkeyProblem(error: unknown, doing: 'sign-in' | 'registration'): Problem {
  const name = error instanceof Error ? error.name : '';
  const message =
    name === 'NotAllowedError'
      ? doing === 'sign-in'
        ? 'No passkey was used: the request was cancelled or timed out, or this device has no passkey for Flipbook.'
        : 'No passkey was made: the request was cancelled or timed out.'
      : name === 'InvalidStateError'
        ? 'This device already has a passkey for this account.'
        : name === 'NotSupportedError' || name === 'WebAuthnError' && /not supported/i.test(String((error as Error).message))
          ? 'This browser cannot use passkeys.'
          : `The passkey could not be used${error instanceof Error && error.message ? `: ${error.message}` : '.'}`;
  return { status: 0, type: name || 'PasskeyError', message, details: {}, retryAfterSeconds: null };
}
