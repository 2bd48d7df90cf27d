import { Ended, Refusal } from './api.ts';
import { h, uid } from './dom.ts';

/** One labelled field of a form and the place of the API's message about it. */
export interface Field {
  element: HTMLElement;
  input: HTMLInputElement;
  error: HTMLElement;
}

export function field(label: string, attributes: Record<string, string | number | boolean>, hint?: string): Field {
  const id = uid('field');
  const error = h('p', { id: `${id}-error`, className: 'field-error', hidden: true });
  const hintElement = hint ? h('p', { id: `${id}-hint`, className: 'hint' }, hint) : null;
  const input = h('input', { id, ...attributes, 'aria-describedby': [hintElement ? `${id}-hint` : '', `${id}-error`].join(' ').trim() });
  return { element: h('div', { className: 'field' }, h('label', { for: id }, label), hintElement, input, error), input, error };
}

/** One checkbox per value, each labelled with it. */
export interface Choice {
  element: HTMLFieldSetElement;
  boxes: HTMLInputElement[];
  error: HTMLElement;
  chosen(): string[];
}

export function choice(legend: string, values: readonly string[], checked: readonly string[]): Choice {
  const id = uid('choice');
  const error = h('p', { id: `${id}-error`, className: 'field-error', hidden: true });
  const boxes = values.map((value) => h('input', { type: 'checkbox', value, checked: checked.includes(value), id: `${id}-${value}` }));
  const element = h(
    'fieldset',
    { 'aria-describedby': `${id}-error` },
    h('legend', {}, legend),
    boxes.map((box) => h('div', { className: 'check' }, box, h('label', { for: box.id }, box.value))),
    error,
  );
  return { element, boxes, error, chosen: () => boxes.filter((box) => box.checked).map((box) => box.value) };
}

/** Where a form shows what the API said: by the field the error names (`extensions.field`), else at the form's foot. */
export interface Feedback {
  fields: Record<string, { error: HTMLElement; input?: HTMLInputElement }>;
  general: HTMLElement;
}

export function generalError(): HTMLElement {
  return h('p', { className: 'form-error', role: 'alert', hidden: true });
}

function clear(feedback: Feedback): void {
  for (const { error, input } of Object.values(feedback.fields)) {
    error.hidden = true;
    error.textContent = '';
    input?.removeAttribute('aria-invalid');
  }
  feedback.general.hidden = true;
  feedback.general.textContent = '';
}

/**
 * Runs an action of a form: its messages cleared first, then the API's refusal shown next to the
 * field it names (its own words), focus on that field. A session that ended is the page's to show.
 */
export async function submit(feedback: Feedback, action: () => Promise<void>): Promise<void> {
  clear(feedback);
  try {
    await action();
  } catch (error) {
    if (error instanceof Ended) return;
    const message = error instanceof Error ? error.message : String(error);
    const target = error instanceof Refusal && error.field ? feedback.fields[error.field] : undefined;
    if (target) {
      target.error.textContent = message;
      target.error.hidden = false;
      target.input?.setAttribute('aria-invalid', 'true');
      (target.input ?? target.error).focus();
      return;
    }
    feedback.general.textContent = message;
    feedback.general.hidden = false;
  }
}

/** A confirmation in a modal dialog (focus kept inside, Escape cancels): resolves true when `confirm` is pressed. */
export function confirmDialog(title: string, text: string, confirm: string): Promise<boolean> {
  return new Promise((resolve) => {
    const titleId = uid('dialog');
    const dialog = h('dialog', { 'aria-labelledby': titleId, className: 'confirm' });
    const done = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      done(false);
    });
    dialog.append(
      h('h2', { id: titleId }, title),
      h('p', {}, text),
      h('div', { className: 'actions' },
        h('button', { type: 'button', className: 'danger', onclick: () => done(true) }, confirm),
        h('button', { type: 'button', onclick: () => done(false), autofocus: true }, 'Cancel'),
      ),
    );
    document.body.append(dialog);
    dialog.showModal();
  });
}
