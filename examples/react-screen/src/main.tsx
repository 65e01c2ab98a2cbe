// A page that shows a computer's screen live to a person: @svc/react's useScreen (frames over an event
// stream, `GET …/computers/{computer}/screen/frames`), the latest picture in an <img>; a click on it is
// a click on the computer at the same place (scaled to the screen's pixels), keys typed on the page go
// to it too. Without `?api=`, the API is the kit's simulated screen (@svc/react/msw's screenHandlers,
// answered in the page by msw's getResponse: no server, no service worker); with
// `?api=<base url>&token=<access token>&workspace=…&computer=…`, a real server.
import { createClient } from '@svc/client';
import { useScreen } from '@svc/react';
import { screenHandlers } from '@svc/react/msw';
import { getResponse } from 'msw';
import { type KeyboardEvent, type MouseEvent, useMemo } from 'react';
import { createRoot } from 'react-dom/client';

const query = new URLSearchParams(location.search);
const api = query.get('api');
const SIMULATED = 'http://simulated.test/v1';
const handlers = screenHandlers({ baseUrl: SIMULATED });
const simulated = async (request: Request) =>
  (await getResponse(handlers, request)) ?? new Response(null, { status: 404 });
/** The keys a page sends by name (xdotool's); a printable character is typed as text. */
const KEYS: Record<string, string> = {
  Enter: 'Return',
  Backspace: 'BackSpace',
  Tab: 'Tab',
  Escape: 'Escape',
};

function ScreenPage() {
  const client = useMemo(
    () =>
      api
        ? createClient({ baseUrl: api, token: query.get('token') ?? '' })
        : createClient({ baseUrl: SIMULATED, token: 'simulated', fetch: simulated }),
    [],
  );
  const { status, frame, error, send } = useScreen({
    client,
    workspace: query.get('workspace') ?? 'dev',
    computer: query.get('computer') ?? 'desk',
    maxWidth: Number(query.get('width') ?? 800),
  });
  const click = (event: MouseEvent<HTMLImageElement>) => {
    if (!frame) return;
    const box = event.currentTarget.getBoundingClientRect();
    const x = Math.floor(((event.clientX - box.left) * frame.screen.width) / box.width);
    const y = Math.floor(((event.clientY - box.top) * frame.screen.height) / box.height);
    void send([{ type: 'click', x, y }]);
  };
  const key = (event: KeyboardEvent<HTMLDivElement>) => {
    const named = KEYS[event.key];
    if (named) void send([{ type: 'key', keys: named }]);
    else if (event.key.length === 1) void send([{ type: 'type', text: event.key }]);
    else return;
    event.preventDefault();
  };
  return (
    <main>
      <h1>Screen</h1>
      <p
        role="status"
        data-status={status}
        data-frame={frame?.id ?? ''}
        data-cursor={frame ? `${frame.cursor.x},${frame.cursor.y}` : ''}
      >
        {status}
        {frame
          ? `: frame ${frame.id}, ${frame.screen.width}×${frame.screen.height}, pointer at ${frame.cursor.x},${frame.cursor.y}`
          : ''}
        {status === 'error' ? ` (${String((error as Error)?.message ?? error)})` : ''}
      </p>
      <div
        role="application"
        aria-label="the computer's screen: click and type here"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the screen takes the keys typed while it has focus
        tabIndex={0}
        onKeyDown={key}
      >
        {frame ? (
          // biome-ignore lint/a11y/useKeyWithClickEvents: keys go to the computer through the div around it
          <img
            id="screen"
            src={frame.src}
            width={frame.width}
            height={frame.height}
            alt="the computer's screen"
            onClick={click}
          />
        ) : null}
      </div>
    </main>
  );
}

createRoot(document.getElementById('root') as HTMLElement).render(<ScreenPage />);
