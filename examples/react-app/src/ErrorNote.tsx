import type { ErrorOf } from '@svc/react';

/** The errors a create can fail with: one per status the spec documents, and network errors. */
type CreateError = ErrorOf<'post', '/workspaces/{workspace}/computers'>;

/** Says what went wrong, by status: the body of each status is the spec's, so its fields type-check. */
export function ErrorNote({ error }: { error: CreateError }) {
  let text: string;
  switch (error.status) {
    case 409:
      text = `Conflict: ${error.body.error.message}`;
      break;
    case 403:
      text = `Not allowed: ${error.body.error.message}`;
      break;
    case 0:
      text = `No answer from the server: ${error.message}`;
      break;
    default:
      text = error.message;
  }
  return (
    <p role="alert" data-testid="error" data-status={error.status} data-code={error.code}>
      {text} ({error.code}, HTTP {error.status}
      {error.requestId ? `, request ${error.requestId}` : ''})
    </p>
  );
}
