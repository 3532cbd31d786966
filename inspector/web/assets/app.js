// plait inspector pages
