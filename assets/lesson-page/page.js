// The lesson page of `mk-tui export FILE --html DIR` (docs/lesson-page.md).
// lesson.js sets window.MK_LESSON: the title, the terminal size, the cast
// of each language (inline, so the page works from file:// with no
// request) and the chapters: one per caption, with its step, its marker's
// index in the cast, its caption in each language and the step's state
// (what `mk-tui state FILE --step N` prints).
(function () {
  "use strict";
  var lesson = window.MK_LESSON;
  var words = {
    en: {
      chapters: "Chapters", step: "step", show: "show state", lang: "en",
      "made-with": "Made with", "player-is": "The player is", "the-casts": "The casts:",
    },
    zh: {
      chapters: "章节", step: "步骤", show: "显示状态", lang: "zh-CN",
      "made-with": "生成工具：", "player-is": "播放器：", "the-casts": "录像文件：",
    },
  };
  // #en or #zh, else the language the page was exported in (--lang).
  var fromHash = location.hash.slice(1);
  var lang = words[fromHash] ? fromHash : lesson.lang;
  var player = null;
  var current = -1;

  function createPlayer(at) {
    var el = document.getElementById("player");
    if (player) {
      player.dispose();
    }
    el.textContent = "";
    el.classList.toggle("chosen", current >= 0);
    player = AsciinemaPlayer.create({ data: lesson.casts[lang] }, el, {
      cols: lesson.cols,
      rows: lesson.rows,
      fit: "width",
      preload: true,
      startAt: at || 0,
    });
    window.mkLessonPlayer = player;
  }

  // Seeks the player to chapter i's marker and pauses there, so the frame
  // stays on the step the caption is about.
  function showChapter(i) {
    current = i;
    // The frame, not the player's start overlay over it.
    document.getElementById("player").classList.add("chosen");
    var items = document.querySelectorAll("#chapters li");
    items.forEach(function (li, j) {
      if (j === i) {
        li.setAttribute("aria-current", "step");
      } else {
        li.removeAttribute("aria-current");
      }
    });
    var el = document.getElementById("player");
    delete el.dataset.shownChapter;
    var shown = player;
    return player
      .seek({ marker: lesson.chapters[i].marker })
      .then(function () {
        return shown.pause();
      })
      .then(function () {
        // Says the frame is the chapter's (tests/lesson_page.rs waits for it).
        if (shown === player && current === i) {
          el.dataset.shownChapter = String(i);
        }
      });
  }
  window.mkLessonShowChapter = showChapter;

  function drawChapters() {
    var w = words[lang];
    document.documentElement.lang = w.lang;
    document.title = lesson.title[lang];
    document.getElementById("title").textContent = lesson.title[lang];
    document.getElementById("chapters-heading").textContent = w.chapters;
    ["made-with", "player-is", "the-casts"].forEach(function (id) {
      document.getElementById(id).textContent = w[id];
    });
    document.querySelectorAll("#languages button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.lang === lang));
    });
    var list = document.getElementById("chapters");
    list.textContent = "";
    lesson.chapters.forEach(function (chapter, i) {
      var li = document.createElement("li");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "chapter";
      var step = document.createElement("span");
      step.className = "step";
      step.textContent = w.step + " " + chapter.step;
      button.appendChild(step);
      button.appendChild(document.createTextNode(" " + chapter.caption[lang]));
      button.addEventListener("click", function () {
        showChapter(i);
      });
      li.appendChild(button);
      var details = document.createElement("details");
      var summary = document.createElement("summary");
      summary.textContent = w.show;
      details.appendChild(summary);
      var pre = document.createElement("pre");
      details.appendChild(pre);
      // Drawn when opened: a state is a few kilobytes, the list can be long.
      details.addEventListener("toggle", function () {
        if (details.open && !pre.textContent) {
          pre.textContent = JSON.stringify(chapter.state, null, 2);
        }
      });
      li.appendChild(details);
      if (i === current) {
        li.setAttribute("aria-current", "step");
      }
      list.appendChild(li);
    });
  }

  document.querySelectorAll("#languages button").forEach(function (b) {
    b.addEventListener("click", function () {
      if (b.dataset.lang === lang) {
        return;
      }
      var at = player ? player.getCurrentTime() : 0;
      lang = b.dataset.lang;
      history.replaceState(null, "", "#" + lang);
      drawChapters();
      createPlayer(at);
    });
  });

  drawChapters();
  createPlayer(0);
})();
