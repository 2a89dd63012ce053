/**
 * The wire contract of POST /v1/detect as the SDK exposes it. The types live in src/contract.ts,
 * shared with the service and the bots; this module keeps the SDK's historical import path working.
 */
export type {
  AuthorMessageScore,
  Composition,
  Confidence,
  DetectAuthorRequest,
  DetectAuthorResponse,
  DetectFileFields,
  DetectFileResponse,
  DetectRequest,
  DetectResponse,
  ErrorCode,
  ErrorEnvelope,
  ErrorType,
  FileErrorCode,
  FileInfo,
  FileType,
  GeneratedSpan,
  KnownErrorCode,
  Language,
  Mode,
  Origin,
  Segment,
  SkipReason,
  Verdict,
} from '../contract.ts';
