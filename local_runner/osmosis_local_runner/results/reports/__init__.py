"""What is written for people and CI: the HTML report (its data, charts, transcripts, a
suite's), JUnit and Markdown step summaries."""
