// `useScreen`: a computer's screen live, for a page that shows it to a person. The frames of
// `@svc/client/screen`'s `watchScreen` as React state (the latest one, its picture as a data URL an
// `<img>` takes), and `send` for input actions. Browser-safe.
import type { SvcClient } from '@svc/client';
import { type ScreenFrame, watchScreen } from '@svc/client/screen';
import type { Schema } from '@svc/contract';
import { useCallback, useEffect, useState } from 'react';

/** Where a {@link useScreen} is: waiting for its first frame, showing frames, ended, or refused. */
export type ScreenStatus = 'idle' | 'connecting' | 'live' | 'ended' | 'error';

/** The latest frame, with its picture as a `data:` URL for an `<img>`. */
export type LiveFrame = Omit<ScreenFrame, 'png'> & { src: string };

/**
 * Options of {@link useScreen}.
 *
 * @example
 * import type { UseScreenOptions } from '@svc/react';
 * declare const client: import('@svc/client').SvcClient;
 * const options: UseScreenOptions = { client, workspace: 'dev', computer: 'desk', maxWidth: 800 };
 */
export interface UseScreenOptions {
  client: SvcClient;
  workspace: string;
  computer: string;
  /** Scale the pictures down to at most this many pixels across (the size the page shows). */
  maxWidth?: number | undefined;
  maxHeight?: number | undefined;
  /** `false`: watch nothing yet. Default `true`. */
  enabled?: boolean | undefined;
}

/**
 * What {@link useScreen} gives a component.
 *
 * @example
 * import type { ScreenSession } from '@svc/react';
 * const label = (s: ScreenSession) => (s.frame ? `${s.frame.cursor.x},${s.frame.cursor.y}` : s.status);
 */
export interface ScreenSession {
  status: ScreenStatus;
  /** The latest frame; undefined until the first. */
  frame: LiveFrame | undefined;
  /** Why the status is `error` (an `ApiError`: `409 invalid_state` for a computer without a display…). */
  error: unknown;
  /** Sends input actions, in order (`POST …/input`; needs the role that runs commands). */
  send(actions: Schema<'InputAction'>[]): Promise<Schema<'InputResult'>>;
}

const base64 = (bytes: Uint8Array) => {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
};

/**
 * Watches a computer's screen while the component is mounted: the latest frame (sent when the
 * picture or the pointer changed, at most 4 a second) as state, and `send` for clicks and keys.
 * Unmounting closes the stream.
 *
 * @example
 * import { useScreen } from '@svc/react';
 * declare const client: import('@svc/client').SvcClient;
 * function Screen() {
 *   const { frame, send } = useScreen({ client, workspace: 'dev', computer: 'desk', maxWidth: 800 });
 *   if (!frame) return <p>waiting for the screen…</p>;
 *   const scale = frame.screen.width / frame.width;
 *   return (
 *     <img
 *       src={frame.src}
 *       alt="the computer's screen"
 *       onClick={(e) => void send([{ type: 'click', x: Math.floor(e.nativeEvent.offsetX * scale), y: Math.floor(e.nativeEvent.offsetY * scale) }])}
 *     />
 *   );
 * }
 */
export function useScreen(options: UseScreenOptions): ScreenSession {
  const { client, workspace, computer, maxWidth, maxHeight, enabled = true } = options;
  const [status, setStatus] = useState<ScreenStatus>('idle');
  const [frame, setFrame] = useState<LiveFrame | undefined>();
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    if (!enabled) return;
    const stop = new AbortController();
    const { signal } = stop;
    setStatus('connecting');
    (async () => {
      for await (const next of watchScreen(client, workspace, computer, { maxWidth, maxHeight, signal })) {
        const { png, ...rest } = next;
        setFrame({ ...rest, src: `data:image/png;base64,${base64(png)}` });
        setStatus('live');
      }
      if (!signal.aborted) setStatus('ended');
    })().catch((cause: unknown) => {
      if (signal.aborted) return;
      setError(cause);
      setStatus('error');
    });
    return () => stop.abort();
  }, [client, workspace, computer, maxWidth, maxHeight, enabled]);

  const send = useCallback(
    async (actions: Schema<'InputAction'>[]) => {
      const {
        data,
        error: refused,
        response,
      } = await client.POST('/workspaces/{workspace}/computers/{computer}/input', {
        params: {
          path: { workspace, computer },
          header: { 'Idempotency-Key': globalThis.crypto.randomUUID() },
        },
        body: { actions },
      });
      if (!data) throw Object.assign(new Error(`input refused: ${response.status}`), { cause: refused });
      return data.input;
    },
    [client, workspace, computer],
  );

  return { status, frame, error, send };
}
