// One floating tooltip element (position: fixed), placed next to a point in viewport
// coordinates and kept inside the window.

import { el, clear } from './dom.js';

export class FloatingTip {
  constructor(class_name) {
    this.node = el('div', { class: `gw-tip ${class_name || ''}`, role: 'tooltip', hidden: true });
    document.body.appendChild(this.node);
  }

  // content: a node or an array of nodes. (x, y): viewport point the tip points at.
  show(content, x, y) {
    clear(this.node);
    for (const child of [].concat(content)) if (child) this.node.appendChild(child);
    this.node.hidden = false;
    this.moveTo(x, y);
  }

  moveTo(x, y) {
    const gap = 14;
    const box = this.node.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    let left = x + gap;
    if (left + box.width > vw - 4) left = Math.max(4, x - gap - box.width);
    let top = y + gap;
    if (top + box.height > vh - 4) top = Math.max(4, y - gap - box.height);
    this.node.style.transform = `translate(${Math.round(left)}px, ${Math.round(top)}px)`;
  }

  hide() {
    this.node.hidden = true;
  }

  destroy() {
    this.node.remove();
  }
}
