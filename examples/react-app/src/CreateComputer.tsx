import type { Operation } from '@svc/client';
import { type FormEvent, useState } from 'react';
import type { Api } from './api.js';
import { ErrorNote } from './ErrorNote.js';

/** Creates a computer and watches it until its operation ends: `creating`, then `running`. */
export function CreateComputer({
  api,
  workspace,
  prefer,
}: {
  api: Api;
  workspace: string;
  prefer?: string | undefined;
}) {
  const sizes = api.useQuery('/sizes');
  const images = api.useQuery('/images');
  const [progress, setProgress] = useState<Operation | undefined>();
  const create = api.useOperationMutation('post', '/workspaces/{workspace}/computers', {
    onProgress: setProgress,
  });
  const created = create.data?.computer;
  const watched = api.useQuery(
    '/workspaces/{workspace}/computers/{computer}',
    { params: { path: { workspace, computer: created?.id ?? '-' } } },
    { enabled: created !== undefined },
  );

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setProgress(undefined);
    create.mutate({
      params: { path: { workspace } },
      body: {
        name: String(form.get('name')),
        size: String(form.get('size')),
        image: String(form.get('image')),
      },
      ...(prefer ? { headers: { Prefer: prefer } } : {}),
    });
  };

  const state =
    watched.data?.computer.state ?? (create.isPending ? (progress ? 'creating' : 'requested') : undefined);
  return (
    <form onSubmit={submit} aria-label="create a computer">
      <input name="name" aria-label="name" required defaultValue="" />
      <select name="size" aria-label="size">
        {sizes.data?.sizes.map((s) => (
          <option key={s.name}>{s.name}</option>
        ))}
      </select>
      <select name="image" aria-label="image">
        {images.data?.images.map((i) => (
          <option key={i.name}>{i.name}</option>
        ))}
      </select>
      <button type="submit" disabled={create.isPending || !sizes.data || !images.data}>
        Create
      </button>
      {state && (
        <output data-testid="created" data-state={state}>
          {watched.data?.computer.name ?? 'computer'}: {state}
          {progress && create.isPending ? ` (${progress.type} ${progress.state} ${progress.progress}%)` : ''}
        </output>
      )}
      {create.error && <ErrorNote error={create.error} />}
    </form>
  );
}
