/**
 * The wire contract of POST /v1/detect as the SDK exposes it. The types live in src/contract.ts,
 * shared with the service and the bots; this module keeps the SDK's historical import path working.
 */
export type {
  Confidence,
  DetectRequest,
  DetectResponse,
  ErrorCode,
  ErrorEnvelope,
  ErrorType,
  KnownErrorCode,
  Language,
  Mode,
  Segment,
  Verdict,
} from '../contract.ts';
